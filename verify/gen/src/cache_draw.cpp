/// Cache kinds, KV dtypes, fp8 scales, combined K/V and padding of drawn cases.
#include "cache_draw.h"

#include <cmath>

#include "fp8_scales.h"
#include "gen_util.h"

namespace pagecheck::verify::gen::detail {
namespace {

/// Per-tensor exponents: one per head, from a common base, or the same for every head.
std::vector<int> draw_exponents(int64_t count) {
  const int base = static_cast<int>(draw_between(kMinScaleExponent, kMaxScaleExponent));
  std::vector<int> out(static_cast<std::size_t>(count), base);
  if (count > 1 && pick<bool>({{1, false}, {2, true}})) {
    // Heads apart by orders of magnitude (a kernel applying one head's scale to another is
    // off by the ratio).
    const uint64_t seed = draw_seed();
    for (int64_t h = 1; h < count; ++h) {
      const int span = kMaxScaleExponent - kMinScaleExponent + 1;
      out[h] = kMinScaleExponent + static_cast<int>(mix_index(seed, h) % span);
    }
  }
  return out;
}

/// Padding of one tensor: 16-byte multiples on the block, head and slot strides.
ref::TensorPadding draw_padding(int64_t x) {
  ref::TensorPadding p{x * draw_between(0, 4), x * draw_between(0, 2), x * draw_between(0, 2)};
  if (!p.any()) p.block = x;
  return p;
}

}  // namespace

CacheDraw draw_cache(const VariantCaps& caps, DType dtype, const std::vector<DType>& kv_options,
                     int64_t num_kv_heads, bool large) {
  CacheDraw d;
  CacheSpec& c = d.cache;
  c.kind = pick_of(caps.cache_kinds);
  // An fp8 cache half the time when the variant declares one.
  std::vector<DType> same, fp8;
  for (DType kv : kv_options) (kv == dtype ? same : fp8).push_back(kv);
  const bool use_fp8 = !fp8.empty() && (same.empty() || pick<bool>({{1, false}, {1, true}}));
  c.kv_dtype = use_fp8 ? pick_of(fp8) : dtype;
  if (dtype_info(c.kv_dtype).fp8) {
    std::vector<ref::ScaleKind> kinds;
    for (ref::ScaleKind k : caps.scale_kinds) {
      if (k != ref::ScaleKind::kNone) kinds.push_back(k);
    }
    d.implied_scale = kinds.empty();
    c.scale_kind = d.implied_scale ? ref::ScaleKind::kPerTensor : pick_of(kinds);
    const int64_t count = ref::scale_count(c.scale_kind, num_kv_heads);
    if (!d.implied_scale) {
      d.k_exponents = draw_exponents(count);
      d.v_exponents = draw_exponents(count);
    }
  }
  if (large) return d;
  c.combined = caps.has(PC_CAP_COMBINED_KV) && pick<bool>({{3, false}, {1, true}});
  const bool shared = caps.has(PC_CAP_CACHE_PAD_SHARED) || caps.has(PC_CAP_CACHE_PAD);
  if (shared && pick<bool>({{3, false}, {1, true}})) {
    const int64_t x = dtype_x(c.kv_dtype);
    c.pad.key = draw_padding(x);
    const bool independent =
        caps.has(PC_CAP_CACHE_PAD) && !c.combined && pick<bool>({{1, false}, {2, true}});
    c.pad.value = independent ? draw_padding(x) : c.pad.key;
  }
  return d;
}

void finish_scales(CacheDraw& d, double k_nominal, double v_nominal) {
  CacheSpec& c = d.cache;
  c.k_scale.clear();
  c.v_scale.clear();
  if (c.scale_kind == ref::ScaleKind::kNone) return;
  if (d.implied_scale) {
    c.k_scale = {1.0f};
    c.v_scale = {1.0f};
    return;
  }
  for (int j : d.k_exponents) c.k_scale.push_back(static_cast<float>(std::ldexp(k_nominal, j)));
  for (int j : d.v_exponents) c.v_scale.push_back(static_cast<float>(std::ldexp(v_nominal, j)));
}

}  // namespace pagecheck::verify::gen::detail
