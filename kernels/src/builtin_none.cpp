/// Built-in kernel registration when the build has no CUDA: there are no built-in kernels.
#include "pagecheck/registry.h"

namespace pagecheck {
bool builtin_kernels_available() {
  return false;
}
void register_builtin_kernels(VariantRegistry&) {}
}  // namespace pagecheck
