/// Contents and poison of KV-cache copy cases.
#include <cmath>
#include <cstring>
#include <set>

#include "buffers.h"
#include "contents.h"
#include "fp8_scales.h"
#include "full_range.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::verify::gen {
namespace {

/// Full-range regime: near the largest finite value of a 16/32-bit `dtype` (a raw copy), or
/// near the largest fp8 code (codes, and the tokens a reshape quantizes, whose quotients
/// value / scale also go beyond the saturation edge, up to the token dtype's own maximum).
double full_range_copy_value(const CopySpec& s, DType dtype, uint64_t h, double factor) {
  const double ordinary = detail::mixed_magnitude(h, -2.0, 1.2) * factor;
  const bool quantized = dtype != s.cache.kv_dtype;  // reshape tokens bound for an fp8 cache
  if (!quantized && !dtype_info(dtype).fp8) {
    return detail::full_range_value(h, dtype_info(dtype).max_finite, ordinary, 0.0);
  }
  // copy_magnitude * factor is what the head's scale maps to the largest code (fp8_scales.h).
  return detail::full_range_value(h, detail::copy_magnitude(s) * factor, ordinary,
                                  quantized ? dtype_info(dtype).max_finite : 0.0);
}

/// Writes one element of a `dtype` buffer from hash `h`: a finite mixed value times `factor`
/// (for an fp8 dtype its code, saturating), a full-range value, or (bits regime) a random bit
/// pattern. Patterns that are NaN are made finite (their lowest exponent bit flipped) in fp8
/// buffers, whose NaN codes are the poison, and in the tokens a reshape quantizes (a NaN
/// becomes the NaN code).
void put(const CopySpec& s, DType dtype, std::vector<std::byte>& buffer, int64_t offset, uint64_t h,
         double factor) {
  if (s.regime == Regime::kBits) {
    const std::size_t size = dtype_size(dtype);
    uint64_t bits = detail::mix64(h);
    const bool quantized = s.dtype != s.cache.kv_dtype;
    if (dtype_info(dtype).fp8 || quantized) {
      std::byte probe[8];
      std::memcpy(probe, &bits, size);
      if (std::isnan(load_element(dtype, probe, 0))) {
        bits ^= uint64_t{1} << (dtype_info(dtype).mantissa_bits - 1);
      }
    }
    std::memcpy(buffer.data() + offset * static_cast<int64_t>(size), &bits, size);
    return;
  }
  if (s.regime == Regime::kFullRange) {
    store_element(dtype, buffer.data(), offset, full_range_copy_value(s, dtype, h, factor));
    return;
  }
  store_element(dtype, buffer.data(), offset, detail::mixed_magnitude(h, -2.0, 1.2) * factor);
}

/// Per KV head: the factor of the contiguous tokens' values and of the cache's stored values
/// (fp8_scales.h: M and M / scale for an fp8 cache; fp8 tokens of a raw copy hold codes like
/// the cache).
struct CopyScaling {
  std::vector<double> token_k, token_v, cache_k, cache_v;
};

CopyScaling copy_scaling(const CopySpec& s) {
  CopyScaling out;
  const DType kv = s.cache.kv_dtype;
  const bool fp8 = dtype_info(kv).fp8, raw = s.dtype == kv;
  const double nominal = detail::nominal_scale(detail::copy_magnitude(s), kv);
  const auto add = [&](const std::vector<float>& scales, int64_t h, std::vector<double>& token,
                       std::vector<double>& cache) {
    const double scale = detail::scale_at(scales, h);
    const double m = fp8 ? detail::content_multiplier(static_cast<float>(scale), nominal) : 1.0;
    cache.push_back(fp8 ? m / scale : 1.0);
    token.push_back(raw ? cache.back() : m);
  };
  for (int64_t h = 0; h < s.num_kv_heads; ++h) {
    add(s.cache.k_scale, h, out.token_k, out.cache_k);
    add(s.cache.v_scale, h, out.token_v, out.cache_v);
  }
  return out;
}

}  // namespace

namespace detail {

double copy_magnitude(const CopySpec& s) {
  return s.regime == Regime::kMixed || s.regime == Regime::kFullRange ? std::pow(10.0, 1.2) : 1.0;
}

}  // namespace detail

ref::CacheCopyProblem materialize(const CopySpec& s) {
  validate(s);
  ref::CacheCopyProblem p;
  p.dtype = s.dtype;
  p.cache = cache_layout(s);
  p.key_layout = key_layout(s);
  p.value_layout = value_layout(s);
  p.slot_mapping = s.slot_mapping;
  p.k_scale = s.cache.k_scale;
  p.v_scale = s.cache.v_scale;
  p.dequantize = s.dequantize;
  const DType kv = s.cache.kv_dtype;
  const uint32_t cache_poison = dtype_info(kv).poison_bits;
  p.key_cache = detail::poisoned_buffer(kv, p.cache.key_span(), cache_poison);
  p.value_cache = detail::poisoned_buffer(kv, p.cache.value_span(), cache_poison);
  std::vector<std::byte>& value_cache = p.cache.combined ? p.key_cache : p.value_cache;
  const int64_t bs = s.block_size, hs = s.head_size;
  const uint64_t seed = s.content_seed;
  const CopyScaling f = copy_scaling(s);

  if (s.family == PC_FAMILY_GATHER_CACHED_KV) {
    // Cache: values at the slots tokens read, poison elsewhere. Outputs: output poison.
    const uint32_t out_poison = dtype_info(s.dtype).output_poison_bits;
    p.key = detail::poisoned_buffer(s.dtype, p.key_layout.span(), out_poison);
    p.value = detail::poisoned_buffer(s.dtype, p.value_layout.span(), out_poison);
    std::set<int64_t> done;
    for (int64_t slot : s.slot_mapping) {
      if (slot < 0 || !done.insert(slot).second) continue;
      const int64_t block = slot / bs, offset = slot % bs;
      for (int64_t h = 0; h < s.num_kv_heads; ++h) {
        for (int64_t d = 0; d < hs; ++d) {
          put(s, kv, p.key_cache, p.cache.key_at(block, h, offset, d),
              detail::hash(seed, detail::kTagKey, slot, h, d), f.cache_k[h]);
          put(s, kv, value_cache, p.cache.value_at(block, h, offset, d),
              detail::hash(seed, detail::kTagValue, slot, h, d), f.cache_v[h]);
        }
      }
    }
    p.validate();
    return p;
  }

  // reshape_and_cache: tokens hold values (also those with slot -1, which must not land
  // anywhere), padding is poison; the blocks written to hold older tokens in every slot.
  const uint32_t token_poison = dtype_info(s.dtype).poison_bits;
  p.key = detail::poisoned_buffer(s.dtype, p.key_layout.span(), token_poison);
  p.value = detail::poisoned_buffer(s.dtype, p.value_layout.span(), token_poison);
  const int64_t num_tokens = static_cast<int64_t>(s.slot_mapping.size());
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t h = 0; h < s.num_kv_heads; ++h) {
      for (int64_t d = 0; d < hs; ++d) {
        put(s, s.dtype, p.key, p.key_layout.offset(t, h, d),
            detail::hash(seed, detail::kTagKey, t, h, d), f.token_k[h]);
        put(s, s.dtype, p.value, p.value_layout.offset(t, h, d),
            detail::hash(seed, detail::kTagValue, t, h, d), f.token_v[h]);
      }
    }
  }
  std::set<int64_t> blocks;
  for (int64_t slot : s.slot_mapping) {
    if (slot >= 0) blocks.insert(slot / bs);
  }
  for (int64_t block : blocks) {
    for (int64_t offset = 0; offset < bs; ++offset) {
      for (int64_t h = 0; h < s.num_kv_heads; ++h) {
        for (int64_t d = 0; d < hs; ++d) {
          const int64_t slot = block * bs + offset;
          put(s, kv, p.key_cache, p.cache.key_at(block, h, offset, d),
              detail::hash(seed, detail::kTagOldKey, slot, h, d), f.cache_k[h]);
          put(s, kv, value_cache, p.cache.value_at(block, h, offset, d),
              detail::hash(seed, detail::kTagOldValue, slot, h, d), f.cache_v[h]);
        }
      }
    }
  }
  p.validate();
  return p;
}

}  // namespace pagecheck::verify::gen
