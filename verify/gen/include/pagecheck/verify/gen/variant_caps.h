#pragma once
/// What a variant declares it supports, as the generators and the case runner need it: family,
/// token and cache dtypes, page layouts, fp8 scale kinds, head and block sizes, capability
/// flags, query lengths, split-K partition sizes, what it writes for context-0 rows, whether
/// it is deterministic, and how it computes. Built from a registered variant (its normalized
/// ABI v2 descriptor) or by hand (CPU tests, simulated variants), so the generators work for
/// kernels they have never seen.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck {
struct VariantInfo;
}

namespace pagecheck::verify::gen {

/// Split-K partition sizes the generator puts its edges at for a variant that declares none:
/// pagecheck's guess of common serving-engine sizes (docs/verify.md). The one such list.
inline const std::vector<int64_t>& default_partition_sizes() {
  static const std::vector<int64_t> sizes{256, 512, 1024};
  return sizes;
}

/// Declared support of one variant.
struct VariantCaps {
  std::string name;                              ///< variant name
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  std::vector<DType> dtypes;                     ///< query / token dtypes (non-empty)
  /// Cache dtypes; empty = the cache dtype always equals the token dtype (kv_dtype_mask 0).
  std::vector<DType> kv_dtypes;
  /// Page layouts (non-empty; x-split alone when the variant declares none).
  std::vector<ref::CacheKind> cache_kinds{ref::CacheKind::kXSplit};
  /// fp8 scale kinds (per tensor, per KV head); empty: an fp8 cache has the implied per-tensor
  /// scale 1.0 only.
  std::vector<ref::ScaleKind> scale_kinds;
  std::vector<int64_t> head_sizes;   ///< supported head sizes (non-empty)
  std::vector<int64_t> block_sizes;  ///< supported block sizes (non-empty)
  uint64_t caps = 0;                 ///< PC_CAP_* flags
  int64_t max_query_len = 1;         ///< largest query length per sequence (1 = decode only)
  /// Split-K partition sizes the variant may use (empty: none declared; the generator's edges
  /// then sit at default_partition_sizes()).
  std::vector<int64_t> partition_sizes;
  pc_context0 context0 = PC_CONTEXT0_UNSUPPORTED;  ///< context-length-0 rows
  bool nondeterministic = false;  ///< outputs may differ bit for bit between two runs
  /// How it computes (attention). The case runner hands it to the one tolerance call.
  pc_precision precision{};

  /// True when every flag of `flag` is declared.
  bool has(uint64_t flag) const { return (caps & flag) == flag; }
  /// The cache dtypes a case with tokens of `dtype` may use: `dtype` itself when declared (or
  /// when no cache dtype is), and every declared fp8 dtype.
  std::vector<DType> kv_dtypes_for(DType dtype) const;
  /// The partition sizes split-K edges sit at: the declared ones, else the default list.
  const std::vector<int64_t>& edge_partitions() const {
    return partition_sizes.empty() ? default_partition_sizes() : partition_sizes;
  }
  /// Throws std::invalid_argument naming the variant when a list is empty, a head size is not
  /// a multiple of 8 (16 bytes of float16 / bfloat16), a size is not positive, or no token
  /// dtype has a cache dtype.
  void validate() const;
};

/// Caps of a registered variant (its normalized version-2 descriptor).
VariantCaps caps_of(const VariantInfo& info);
/// Caps of a variant that declares every 16/32-bit dtype, the given sizes and flags, x-split
/// caches of the token dtype and decode only (tests; set further fields by hand).
VariantCaps make_caps(std::string name, pc_family family, std::vector<int64_t> head_sizes,
                      std::vector<int64_t> block_sizes, uint64_t caps);

/// "alibi", "large_cache", "token_stride", ...: the names of the PC_CAP_* flags in `caps`
/// (reports, `pagecheck list`); unknown bits as "bit N".
std::vector<std::string> cap_names(uint64_t caps);

void to_json(nlohmann::json& j, const VariantCaps& caps);
void from_json(const nlohmann::json& j, VariantCaps& caps);

}  // namespace pagecheck::verify::gen
