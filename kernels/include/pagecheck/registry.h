#pragma once
/// The variant registry: built-in kernels and plugins register through the same C ABI. Plugins
/// of ABI version 2 (pagecheck/plugin.h) and version 1 (pagecheck/plugin_v1.h) are loaded; every
/// variant is kept as a normalized version-2 descriptor and called through one wrapper API that
/// takes version-2 arguments (a version-1 variant gets them converted, where v1 can express
/// them).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/plugin_v1.h"

namespace pagecheck {

/// A registered variant with owned copies of everything its descriptor points to.
struct VariantInfo {
  /// The normalized version-2 descriptor; its pointers point into *this. For a version-1
  /// variant it is the translation of `variant_v1` (docs/plugins.md) and its functions are
  /// trampolines into the wrappers below (user_data points at *this).
  pc_variant variant{};
  int abi_version = PAGECHECK_PLUGIN_ABI_VERSION;  ///< ABI the variant was registered with
  pc_variant_v1 variant_v1{};            ///< version 1 only: the plugin's descriptor (own pointers)
  std::string name;                      ///< variant name
  std::string description;               ///< one-line description
  std::string origin;                    ///< "builtin", "planted", "test" or the plugin's path
  std::vector<int32_t> head_sizes;       ///< supported head sizes
  std::vector<int32_t> block_sizes;      ///< supported block sizes
  std::vector<int32_t> partition_sizes;  ///< declared split-K partition sizes (may be empty)

  VariantInfo() = default;
  VariantInfo(const VariantInfo&) = delete;
  VariantInfo& operator=(const VariantInfo&) = delete;

  /// True when the variant declares support for this query / token dtype, head size and block
  /// size.
  bool supports(pc_dtype dtype, int64_t head_size, int64_t block_size) const;
  /// True when it declares a cache of `kv_dtype` next to tokens of `dtype` (kv_dtype_mask 0:
  /// only kv_dtype == dtype).
  bool supports_kv_dtype(pc_dtype dtype, pc_dtype kv_dtype) const;
  /// True when it declares the page layout (cache_kind_mask 0: x-split only).
  bool supports_cache_kind(pc_cache_kind kind) const;
  /// True when it declares the fp8 scale kind (scale_kind_mask 0: PC_SCALE_NONE only).
  bool supports_scale_kind(pc_scale_kind kind) const;
  /// True when every PC_CAP_* flag of `caps` is declared.
  bool has_caps(uint64_t caps) const { return (variant.caps & caps) == caps; }
  /// Largest query length per sequence it takes (declared 0 counts as 1: decode only).
  int64_t max_query_len() const { return variant.max_query_len > 1 ? variant.max_query_len : 1; }
  /// True when outputs may differ bit for bit between two runs.
  bool nondeterministic() const { return variant.nondeterministic != 0; }

  /// The variant's can_implement on version-2 `args` (the family's struct). OK when it has no
  /// can_implement; otherwise its status, with its reason in *msg (when msg is not NULL). A
  /// version-1 variant gets the arguments converted first; what v1 cannot express is
  /// PC_STATUS_UNSUPPORTED with the reason ("ABI v1 variant: cannot express NHD caches").
  pc_status can_implement(const pc_device_info& device, const void* args, std::string* msg) const;
  /// Device workspace bytes launch needs for `args` (0 without a workspace_bytes function, or
  /// when a version-1 variant cannot take the arguments).
  std::size_t workspace_bytes(const pc_device_info& device, const void* args) const;
  /// Enqueues the variant on `stream` (a cudaStream_t); `workspace` holds workspace_bytes()
  /// bytes, 256-byte aligned. Status and reason as for can_implement.
  pc_status launch(const pc_device_info& device, const void* args, void* workspace, void* stream,
                   std::string* msg) const;
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

  /// Registers a copy of the version-2 `variant`; throws RegistryError naming the variant and
  /// `origin` on a struct_size smaller than the fields the host reads, a duplicate name in the
  /// family, a missing launch function, a variant that declares no dtype, head size or block
  /// size, or a declaration with bits or values this host does not know.
  void add(const pc_variant& variant, const std::string& origin);
  /// Registers a copy of a version-1 `variant` (translated as VariantInfo::variant says); same
  /// errors.
  void add_v1(const pc_variant_v1& variant, const std::string& origin);
  /// Calls `register_fn` with a pc_host bound to this registry whose abi_version is
  /// `abi_version` (the version the plugin declared); throws RegistryError naming `origin` when
  /// it fails or registers nothing.
  void register_with(pc_register_fn register_fn, const std::string& origin,
                     int abi_version = PAGECHECK_PLUGIN_ABI_VERSION);
  /// dlopen()s a plugin and registers its variants; throws RegistryError naming the path on a
  /// missing file, a missing symbol, an ABI version other than 1 or 2 (naming both) or a variant
  /// the registry refuses.
  void load_plugin(const std::string& path);

  /// All variants, in registration order.
  const std::vector<std::unique_ptr<VariantInfo>>& variants() const { return variants_; }
  /// The variants of one family, in registration order.
  std::vector<const VariantInfo*> family(pc_family family) const;
  /// The named variant of a family, or nullptr.
  const VariantInfo* find(pc_family family, std::string_view name) const;

 private:
  void insert(std::unique_ptr<VariantInfo> info);
  std::vector<std::unique_ptr<VariantInfo>> variants_;
  std::vector<std::shared_ptr<void>> plugin_handles_;
};

/// True when the built-in CUDA kernels were compiled into this build.
bool builtin_kernels_available();
/// Registers the built-in kernels (no-op without CUDA) into `registry`.
void register_builtin_kernels(VariantRegistry& registry);

}  // namespace pagecheck
