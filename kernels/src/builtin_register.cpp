/// Built-in kernel registration when the build has CUDA: the built-in variants are registered
/// through the same C ABI as plugins (pagecheck/plugin.h).
#include <cstddef>

#include "builtin_variants.h"
#include "pagecheck/registry.h"

/// Registration function of the built-in kernels, shaped like a plugin's
/// pagecheck_plugin_register: adds every built-in variant through host->add_variant.
extern "C" int pagecheck_builtin_register(const pc_host* host) {
  if (host == nullptr || host->abi_version != PAGECHECK_PLUGIN_ABI_VERSION) return 1;
  std::size_t count = 0;
  const pc_variant* variants = pagecheck::kernels::builtin_variants(&count);
  for (std::size_t i = 0; i < count; ++i) {
    if (host->add_variant(host->context, &variants[i]) != PC_STATUS_OK) return 1;
  }
  return 0;
}

namespace pagecheck {
bool builtin_kernels_available() {
  return true;
}
void register_builtin_kernels(VariantRegistry& registry) {
  registry.register_with(&pagecheck_builtin_register, "builtin");
}
}  // namespace pagecheck
