/// Cache-copy properties: gather after reshape_and_cache returns what was written, and slots of
/// -1 leave the cache (reshape) or the token rows (gather) untouched, byte for byte.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>

#include "pagecheck/reference/cache_copy.h"
#include "test_support.h"

namespace pagecheck {
namespace {

/// True when element `index` of the two buffers has the same bytes.
bool same_element(DType dtype, const std::vector<std::byte>& a, const std::vector<std::byte>& b,
                  int64_t index) {
  const std::size_t size = dtype_size(dtype);
  return std::memcmp(a.data() + index * size, b.data() + index * size, size) == 0;
}

RC_GTEST_PROP(CacheCopy, GatherAfterReshapeReturnsWhatWasWritten, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const verify::CopySpec spec = *test::gen_copy_spec(dtype);
  ref::CacheCopyProblem p = verify::make_copy_problem(spec);
  const std::vector<std::byte> written_key = p.key, written_value = p.value;
  ref::reshape_and_cache(p);
  verify::fill_nan(dtype, p.key);
  verify::fill_nan(dtype, p.value);
  ref::gather_cached_kv(p);
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    for (int64_t h = 0; h < p.cache.num_kv_heads; ++h) {
      for (int64_t d = 0; d < p.cache.head_size; ++d) {
        const int64_t k = p.key_layout.offset(t, h, d), v = p.value_layout.offset(t, h, d);
        if (p.slot_mapping[t] == -1) {  // skipped both ways: the poison stays
          RC_ASSERT(std::isnan(load_element(dtype, p.key.data(), k)));
          RC_ASSERT(std::isnan(load_element(dtype, p.value.data(), v)));
        } else {
          RC_ASSERT(same_element(dtype, p.key, written_key, k));
          RC_ASSERT(same_element(dtype, p.value, written_value, v));
        }
      }
    }
  }
}

RC_GTEST_PROP(CacheCopy, SkippedSlotsLeaveTheCacheUntouched, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  verify::CopySpec spec = *test::gen_copy_spec(dtype);
  spec.skip_fraction = 1.0;  // every slot is -1
  ref::CacheCopyProblem p = verify::make_copy_problem(spec);
  const std::vector<std::byte> key_cache = p.key_cache, value_cache = p.value_cache;
  const std::vector<std::byte> key = p.key, value = p.value;
  ref::reshape_and_cache(p);
  RC_ASSERT(p.key_cache == key_cache);
  RC_ASSERT(p.value_cache == value_cache);
  ref::gather_cached_kv(p);
  RC_ASSERT(p.key == key);
  RC_ASSERT(p.value == value);
}

RC_GTEST_PROP(CacheCopy, ReshapeChangesOnlyTheMappedSlots, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const verify::CopySpec spec = *test::gen_copy_spec(dtype);
  ref::CacheCopyProblem p = verify::make_copy_problem(spec);
  const std::vector<std::byte> before = p.key_cache;
  ref::reshape_and_cache(p);
  std::vector<bool> mapped(p.cache.num_blocks * p.cache.block_size, false);
  for (int64_t slot : p.slot_mapping) {
    if (slot >= 0) mapped[slot] = true;
  }
  const ref::PagedCacheLayout& c = p.cache;
  for (int64_t b = 0; b < c.num_blocks; ++b) {
    for (int64_t slot = 0; slot < c.block_size; ++slot) {
      if (mapped[b * c.block_size + slot]) continue;
      for (int64_t h = 0; h < c.num_kv_heads; ++h) {
        for (int64_t d = 0; d < c.head_size; ++d) {
          RC_ASSERT(same_element(dtype, p.key_cache, before, c.key_offset(b, h, d, slot)));
        }
      }
    }
  }
}

TEST(CacheCopy, CopiesAreBitExactIncludingNaNPayloadsAndSignedZeros) {
  verify::CopySpec spec;
  spec.dtype = DType::kFloat16;
  spec.num_blocks = 1;
  spec.num_tokens = 1;
  spec.skip_fraction = 0.0;
  ref::CacheCopyProblem p = verify::make_copy_problem(spec);
  const uint16_t patterns[] = {0x7d01, 0xfe77, 0x8000, 0x0001, 0x7c00};  // sNaN, qNaN, -0, ...
  for (int64_t d = 0; d < 5; ++d) {
    std::memcpy(p.key.data() + p.key_layout.offset(0, 0, d) * 2, &patterns[d], 2);
  }
  ref::reshape_and_cache(p);
  const int64_t slot = p.slot_mapping[0];
  for (int64_t d = 0; d < 5; ++d) {
    uint16_t bits = 0;
    std::memcpy(&bits, p.key_cache.data() + p.cache.key_offset(0, 0, d, slot) * 2, 2);
    EXPECT_EQ(bits, patterns[d]) << "dim " << d;
  }
}

}  // namespace
}  // namespace pagecheck
