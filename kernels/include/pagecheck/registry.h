#pragma once
/// The variant registry: built-in kernels and plugins register through the same C ABI.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pagecheck/plugin.h"

namespace pagecheck {

/// A registered variant with owned copies of everything the pc_variant points to.
struct VariantInfo {
  pc_variant variant{};                 ///< callable descriptor; its pointers point into *this
  std::string name;                     ///< variant name
  std::string description;              ///< one-line description
  std::string origin;                   ///< "builtin" or the plugin's path
  std::vector<int32_t> head_sizes;      ///< supported head sizes
  std::vector<int32_t> block_sizes;     ///< supported block sizes
  /// True when the variant declares support for this dtype / head size / block size.
  bool supports(pc_dtype dtype, int64_t head_size, int64_t block_size) const;
};

/// Error loading a plugin or registering a variant; the message names the file or variant.
struct RegistryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Family name used on the command line: "paged_attention", "gather_cached_kv",
/// "reshape_and_cache".
const char* family_name(pc_family family);
/// Parses a family name; throws std::invalid_argument naming the text.
pc_family parse_family(std::string_view text);

class VariantRegistry {
 public:
  VariantRegistry() = default;
  VariantRegistry(const VariantRegistry&) = delete;
  VariantRegistry& operator=(const VariantRegistry&) = delete;

  /// Registers a copy of `variant`; throws RegistryError on a duplicate name in the family, a
  /// missing launch function, or a variant that declares no dtype, head size or block size.
  void add(const pc_variant& variant, const std::string& origin);
  /// Calls `register_fn` with a pc_host bound to this registry; throws RegistryError naming
  /// `origin` when it fails or registers nothing.
  void register_with(pc_register_fn register_fn, const std::string& origin);
  /// dlopen()s a plugin and registers its variants; throws RegistryError naming the path on a
  /// missing file, a missing symbol, a wrong ABI version or a variant that declares nothing.
  void load_plugin(const std::string& path);

  /// All variants, in registration order.
  const std::vector<std::unique_ptr<VariantInfo>>& variants() const { return variants_; }
  /// The variants of one family, in registration order.
  std::vector<const VariantInfo*> family(pc_family family) const;
  /// The named variant of a family, or nullptr.
  const VariantInfo* find(pc_family family, std::string_view name) const;

 private:
  std::vector<std::unique_ptr<VariantInfo>> variants_;
  std::vector<std::shared_ptr<void>> plugin_handles_;
};

/// True when the built-in CUDA kernels were compiled into this build.
bool builtin_kernels_available();
/// Registers the built-in kernels (no-op without CUDA) into `registry`.
void register_builtin_kernels(VariantRegistry& registry);

}  // namespace pagecheck
