#pragma once
/// The cache of a case as the generators draw it (internal): layout kind, KV dtype, fp8 scale
/// kind and scale exponents, K/V in one allocation, padding, each only where the variant
/// declares it. Shared by the attention and copy generators.
#include <cstdint>
#include <vector>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen::detail {

/// A drawn cache whose fp8 scales wait for the contents' magnitudes (finish_scales).
struct CacheDraw {
  CacheSpec cache;               ///< everything but the scales' values
  std::vector<int> k_exponents;  ///< j of k_scale = nominal * 2^j, one per scale entry
  std::vector<int> v_exponents;  ///< as k_exponents, for V
  bool implied_scale = false;    ///< fp8 without declared scale kinds: per-tensor 1.0
};

/// Draws the cache for tokens of `dtype`. `kv_options` are the cache dtypes the family allows
/// (non-empty); `large` cases keep packed, separate K/V caches.
CacheDraw draw_cache(const VariantCaps& caps, DType dtype, const std::vector<DType>& kv_options,
                     int64_t num_kv_heads, bool large);

/// Sets the fp8 scales: nominal * 2^j for each exponent (or the implied 1.0).
void finish_scales(CacheDraw& draw, double k_nominal, double v_nominal);

}  // namespace pagecheck::verify::gen::detail
