/// Metamorphic properties of the reference: relabelling physical blocks, repeating kv heads,
/// shifting all logits of a head by a constant, expressing ALiBi as a key dimension, and the
/// thread count must not change the result.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/oracle_agreement.h"
#include "test_support.h"

namespace pagecheck {
namespace {

using ref::PagedAttentionProblem;
using ref::PagedAttentionResult;

/// Copies element `from` of `src` to element `to` of `dst` (raw bytes).
void copy_element(DType dtype, const std::vector<std::byte>& src, int64_t from,
                  std::vector<std::byte>& dst, int64_t to) {
  const std::size_t size = dtype_size(dtype);
  std::memcpy(dst.data() + to * size, src.data() + from * size, size);
}

/// Sets key element (block, head, dim, slot) to `value` for every slot a sequence uses.
template <typename ValueFn>
void set_key_dim0(PagedAttentionProblem& p, ValueFn value_of) {
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t t = 0; t < p.context_lens[s]; ++t) {
      const int64_t block = p.block_table[s * p.max_blocks_per_seq + t / p.block_size()];
      for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
        store_element(p.dtype, p.key_cache.data(),
                      p.cache.key_offset(block, h, 0, t % p.block_size()), value_of(s, t));
      }
    }
  }
}

/// Sets query dim 0 of every sequence and head h to value_of(h).
template <typename ValueFn>
void set_query_dim0(PagedAttentionProblem& p, ValueFn value_of) {
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      store_element(p.dtype, p.query.data(), p.query_layout.offset(s, h, 0), value_of(h));
    }
  }
}

/// Outputs agree to 1e-12 relative (floor 1e-2); lse values differ by `lse_shift[h]`.
void expect_close(const PagedAttentionResult& a, const PagedAttentionResult& b,
                  const std::vector<double>& lse_shift) {
  const ref::ErrorMetrics m =
      ref::compare(a.out, b.out, {a.num_seqs, a.num_heads, a.head_size}, 1e-2);
  if (m.max_rel > 1e-12 || m.num_nonfinite > 0) RC_FAIL("outputs differ: " + m.to_string());
  for (std::size_t i = 0; i < a.lse.size(); ++i) {
    const double expected = a.lse[i] + lse_shift[i % a.num_heads];
    RC_ASSERT(std::fabs(b.lse[i] - expected) <= 1e-12 * std::max(1.0, std::fabs(expected)));
  }
}

RC_GTEST_PROP(Metamorphic, PermutingPhysicalBlocksIsInvisible, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const verify::AttentionSpec spec = *test::gen_attention_spec(dtype);
  const PagedAttentionProblem p = verify::make_attention_problem(spec);
  std::vector<int64_t> perm(p.cache.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(spec.seed ^ 0x9e3779b97f4a7c15ull);
  std::shuffle(perm.begin(), perm.end(), rng);
  PagedAttentionProblem q = p;
  verify::fill_nan(q.dtype, q.key_cache);
  verify::fill_nan(q.dtype, q.value_cache);
  const ref::PagedCacheLayout& c = p.cache;
  for (int64_t b = 0; b < c.num_blocks; ++b) {
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        for (int64_t slot = 0; slot < c.block_size; ++slot) {
          copy_element(p.dtype, p.key_cache, c.key_offset(b, h, d, slot), q.key_cache,
                       c.key_offset(perm[b], h, d, slot));
          copy_element(p.dtype, p.value_cache, c.value_offset(b, h, d, slot), q.value_cache,
                       c.value_offset(perm[b], h, d, slot));
        }
      }
    }
  }
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const int64_t used = (p.context_lens[s] + c.block_size - 1) / c.block_size;
    for (int64_t b = 0; b < used; ++b) {
      int32_t& entry = q.block_table[s * p.max_blocks_per_seq + b];
      entry = static_cast<int32_t>(perm[entry]);
    }
  }
  const PagedAttentionResult before = ref::paged_attention(p, {1});
  const PagedAttentionResult after = ref::paged_attention(q, {1});
  RC_ASSERT(before.out == after.out);  // bit for bit: same arithmetic on the same values
  RC_ASSERT(before.lse == after.lse);
}

RC_GTEST_PROP(Metamorphic, GqaEqualsMhaWithRepeatedKvHeads, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  verify::AttentionSpec spec = *test::gen_attention_spec(dtype);
  spec.num_heads = spec.num_kv_heads * *rc::gen::element<int64_t>(2, 3, 4, 8);
  const PagedAttentionProblem gqa = verify::make_attention_problem(spec);
  const int64_t group = gqa.num_heads / gqa.num_kv_heads();
  PagedAttentionProblem mha = gqa;
  const ref::PagedCacheLayout& c = gqa.cache;
  mha.cache = verify::padded_cache_layout(dtype, c.num_blocks, gqa.num_heads, c.head_size,
                                          c.block_size, spec.cache_pad);
  mha.key_cache.assign(mha.cache.key_span() * dtype_size(dtype), std::byte{0});
  mha.value_cache.assign(mha.cache.value_span() * dtype_size(dtype), std::byte{0});
  verify::fill_nan(dtype, mha.key_cache);
  verify::fill_nan(dtype, mha.value_cache);
  for (int64_t b = 0; b < c.num_blocks; ++b) {
    for (int64_t h = 0; h < gqa.num_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        for (int64_t slot = 0; slot < c.block_size; ++slot) {
          copy_element(dtype, gqa.key_cache, c.key_offset(b, h / group, d, slot), mha.key_cache,
                       mha.cache.key_offset(b, h, d, slot));
          copy_element(dtype, gqa.value_cache, c.value_offset(b, h / group, d, slot),
                       mha.value_cache, mha.cache.value_offset(b, h, d, slot));
        }
      }
    }
  }
  const PagedAttentionResult a = ref::paged_attention(gqa, {2});
  const PagedAttentionResult b = ref::paged_attention(mha, {2});
  RC_ASSERT(a.out == b.out);  // one product per query head: bit for bit
  RC_ASSERT(a.lse == b.lse);
}

RC_GTEST_PROP(Metamorphic, QueryShiftThatMovesAllLogitsEquallyKeepsOutput, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const verify::AttentionSpec spec = *test::gen_attention_spec(dtype);
  PagedAttentionProblem p = verify::make_attention_problem(spec);
  // Key dim 0 is 1 for every used token, so raising query dim 0 by 2 adds 2 * scale to
  // every logit of every head.
  set_key_dim0(p, [](int64_t, int64_t) { return 1.0; });
  set_query_dim0(p, [](int64_t) { return 0.5; });
  PagedAttentionProblem shifted = p;
  set_query_dim0(shifted, [](int64_t) { return 2.5; });
  const PagedAttentionResult a = ref::paged_attention(p, {1});
  const PagedAttentionResult b = ref::paged_attention(shifted, {1});
  expect_close(a, b, std::vector<double>(p.num_heads, 2.0 * static_cast<double>(p.scale)));
}

RC_GTEST_PROP(Metamorphic, AlibiEqualsAPositionKeyDimension, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  verify::AttentionSpec spec = *test::gen_attention_spec(dtype);
  spec.share_prefix = false;  // key dim 0 below depends on the sequence
  spec.alibi = true;
  for (int32_t& len : spec.context_lens) len = std::min(len, 256);  // |t| <= 256: exact in bf16
  PagedAttentionProblem with_alibi = verify::make_attention_problem(spec);
  with_alibi.scale = 0.125f;  // a power of two: slope = scale * v is exact
  const std::vector<double> v_of_head{0.5, 0.25, 1.0, 0.75};
  auto v = [&](int64_t h) { return v_of_head[h % v_of_head.size()]; };
  for (int64_t h = 0; h < with_alibi.num_heads; ++h) {
    with_alibi.alibi_slopes[h] = static_cast<float>(0.125 * v(h));
  }
  set_key_dim0(with_alibi, [](int64_t, int64_t) { return 0.0; });
  set_query_dim0(with_alibi, [](int64_t) { return 0.0; });
  // Without ALiBi, key dim 0 = t - context_len + 1 (exact: |t| <= 256) and query dim 0 = v.
  PagedAttentionProblem with_key = with_alibi;
  with_key.alibi_slopes.clear();
  set_key_dim0(with_key, [&](int64_t s, int64_t t) {
    return static_cast<double>(t - with_key.context_lens[s] + 1);
  });
  set_query_dim0(with_key, v);
  const PagedAttentionResult a = ref::paged_attention(with_alibi, {1});
  const PagedAttentionResult b = ref::paged_attention(with_key, {1});
  expect_close(a, b, std::vector<double>(with_alibi.num_heads, 0.0));
}

RC_GTEST_PROP(Metamorphic, ThreadCountDoesNotChangeTheResult, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const PagedAttentionProblem p = verify::make_attention_problem(*test::gen_attention_spec(dtype));
  const int threads = *rc::gen::inRange(2, 9);
  const PagedAttentionResult a = ref::paged_attention(p, {1});
  const PagedAttentionResult b = ref::paged_attention(p, {threads});
  RC_ASSERT(a.out == b.out);
  RC_ASSERT(a.lse == b.lse);
}

}  // namespace
}  // namespace pagecheck
