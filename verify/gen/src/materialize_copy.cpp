/// Contents and poison of KV-cache copy cases.
#include <cstring>
#include <set>

#include "contents.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::verify::gen {
namespace detail {
void fill_bits(DType dtype, std::vector<std::byte>& buffer, uint32_t bits);
std::vector<std::byte> poisoned_buffer(DType dtype, int64_t elements, uint32_t bits);
}  // namespace detail

namespace {

/// Writes one element: a finite mixed value, or (bits regime) a random bit pattern.
void put(const CopySpec& s, std::vector<std::byte>& buffer, int64_t offset, uint64_t h) {
  if (s.regime == Regime::kBits) {
    const std::size_t size = dtype_size(s.dtype);
    const uint64_t bits = detail::mix64(h);
    std::memcpy(buffer.data() + offset * static_cast<int64_t>(size), &bits, size);
    return;
  }
  store_element(s.dtype, buffer.data(), offset, detail::mixed_magnitude(h, -2.0, 1.2));
}

}  // namespace

ref::CacheCopyProblem materialize(const CopySpec& s) {
  validate(s);
  ref::CacheCopyProblem p;
  p.dtype = s.dtype;
  p.cache = cache_layout(s);
  p.key_layout = key_layout(s);
  p.value_layout = value_layout(s);
  p.slot_mapping = s.slot_mapping;
  const uint32_t poison = poison_bits(s.dtype);
  p.key_cache = detail::poisoned_buffer(s.dtype, p.cache.key_span(), poison);
  p.value_cache = detail::poisoned_buffer(s.dtype, p.cache.value_span(), poison);
  const int64_t bs = s.block_size, hs = s.head_size;
  const uint64_t seed = s.content_seed;

  if (s.family == PC_FAMILY_GATHER_CACHED_KV) {
    // Cache: values at the slots tokens read, poison elsewhere. Outputs: output poison.
    const uint32_t out_poison = output_poison_bits(s.dtype);
    p.key = detail::poisoned_buffer(s.dtype, p.key_layout.span(), out_poison);
    p.value = detail::poisoned_buffer(s.dtype, p.value_layout.span(), out_poison);
    std::set<int64_t> done;
    for (int64_t slot : s.slot_mapping) {
      if (slot < 0 || !done.insert(slot).second) continue;
      const int64_t block = slot / bs, offset = slot % bs;
      for (int64_t h = 0; h < s.num_kv_heads; ++h) {
        for (int64_t d = 0; d < hs; ++d) {
          put(s, p.key_cache, p.cache.key_offset(block, h, d, offset),
              detail::hash(seed, detail::kTagKey, slot, h, d));
          put(s, p.value_cache, p.cache.value_offset(block, h, d, offset),
              detail::hash(seed, detail::kTagValue, slot, h, d));
        }
      }
    }
    p.validate();
    return p;
  }

  // reshape_and_cache: tokens hold values (also those with slot -1, which must not land
  // anywhere), padding is poison; the blocks written to hold older tokens in every slot.
  p.key = detail::poisoned_buffer(s.dtype, p.key_layout.span(), poison);
  p.value = detail::poisoned_buffer(s.dtype, p.value_layout.span(), poison);
  const int64_t num_tokens = static_cast<int64_t>(s.slot_mapping.size());
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t h = 0; h < s.num_kv_heads; ++h) {
      for (int64_t d = 0; d < hs; ++d) {
        put(s, p.key, p.key_layout.offset(t, h, d), detail::hash(seed, detail::kTagKey, t, h, d));
        put(s, p.value, p.value_layout.offset(t, h, d),
            detail::hash(seed, detail::kTagValue, t, h, d));
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
          put(s, p.key_cache, p.cache.key_offset(block, h, d, offset),
              detail::hash(seed, detail::kTagOldKey, slot, h, d));
          put(s, p.value_cache, p.cache.value_offset(block, h, d, offset),
              detail::hash(seed, detail::kTagOldValue, slot, h, d));
        }
      }
    }
  }
  p.validate();
  return p;
}

}  // namespace pagecheck::verify::gen
