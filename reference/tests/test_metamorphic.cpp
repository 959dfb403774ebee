/// Metamorphic properties of the reference's structure: relabelling physical blocks, repeating
/// kv heads, storing the same contents under another cache layout, storing an fp8 cache
/// dequantized in float32, shifting all logits of a head by a constant, expressing ALiBi as a
/// key dimension, and the thread count must not change the result.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "cache_contents.h"
#include "float64_bounds.h"
#include "pagecheck/reference/paged_attention.h"
#include "test_support.h"

namespace pagecheck {
namespace {

using ref::PagedAttentionProblem;
using ref::PagedAttentionResult;

using test::random_spec;

/// Sets key dim 0 of every kv head to value_of(seq, t) for every token a sequence holds
/// (16/32-bit caches: the value is stored rounded).
template <typename ValueFn>
void set_key_dim0(PagedAttentionProblem& p, ValueFn value_of) {
  const ref::RaggedBatch& b = p.batch;
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    for (int64_t t = 0; t < b.context_lens[s]; ++t) {
      const int64_t block = b.block_table[s * b.max_blocks_per_seq + t / p.block_size()];
      for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
        store_element(p.cache.dtype, p.key_cache.data(),
                      p.cache.key_at(block, h, t % p.block_size(), 0), value_of(s, t));
      }
    }
  }
}

/// Sets query dim 0 of every row and head h to value_of(h).
template <typename ValueFn>
void set_query_dim0(PagedAttentionProblem& p, ValueFn value_of) {
  for (int64_t row = 0; row < p.query_layout.num_tokens; ++row) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      store_element(p.dtype, p.query.data(), p.query_layout.offset(row, h, 0), value_of(h));
    }
  }
}

/// Results identical bit for bit.
void expect_identical(const PagedAttentionResult& a, const PagedAttentionResult& b) {
  RC_ASSERT(a.out == b.out);
  RC_ASSERT(a.lse == b.lse);
}

RC_GTEST_PROP(Metamorphic, PermutingPhysicalBlocksIsInvisible, ()) {
  const verify::AttentionSpec spec = random_spec();
  const PagedAttentionProblem p = verify::make_attention_problem(spec);
  std::vector<int64_t> perm(p.cache.num_blocks), inverse(p.cache.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(spec.seed ^ 0x9e3779b97f4a7c15ull);
  std::shuffle(perm.begin(), perm.end(), rng);
  for (std::size_t b = 0; b < perm.size(); ++b) inverse[perm[b]] = static_cast<int64_t>(b);
  PagedAttentionProblem q = p;  // block b of p is block perm[b] of q
  test::replace_cache(q, p.cache);
  test::copy_cache(
      p, q, [&](int64_t b) { return inverse[b]; }, [](int64_t h) { return h; });
  const ref::RaggedBatch& batch = p.batch;
  for (int64_t s = 0; s < batch.num_seqs; ++s) {
    const int64_t used = (batch.context_lens[s] + p.block_size() - 1) / p.block_size();
    for (int64_t b = 0; b < used; ++b) {
      int32_t& entry = q.batch.block_table[s * batch.max_blocks_per_seq + b];
      entry = static_cast<int32_t>(perm[entry]);
    }
  }
  // Bit for bit: the same arithmetic on the same values.
  expect_identical(ref::paged_attention(p, {1}), ref::paged_attention(q, {1}));
}

RC_GTEST_PROP(Metamorphic, GqaEqualsMhaWithRepeatedKvHeads, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.num_heads = spec.num_kv_heads * *rc::gen::element<int64_t>(2, 3, 4, 8);
  const PagedAttentionProblem gqa = verify::make_attention_problem(spec);
  const int64_t group = gqa.num_heads / gqa.num_kv_heads();
  const ref::PagedCacheLayout& c = gqa.cache;
  PagedAttentionProblem mha = gqa;
  test::replace_cache(mha,
                      ref::make_cache_layout(
                          c.kind, c.dtype, {c.num_blocks, gqa.num_heads, c.head_size, c.block_size},
                          verify::uniform_cache_padding(spec.cache_pad), c.combined, c.scale_kind));
  test::copy_cache(
      gqa, mha, [](int64_t b) { return b; }, [&](int64_t h) { return h / group; });
  if (c.scale_kind == ref::ScaleKind::kPerKvHead) {
    for (std::vector<float>* scales : {&mha.k_scale, &mha.v_scale}) {
      std::vector<float> repeated;
      for (int64_t h = 0; h < gqa.num_heads; ++h) repeated.push_back((*scales)[h / group]);
      *scales = repeated;
    }
  }
  // One product per query vector: bit for bit.
  expect_identical(ref::paged_attention(gqa, {2}), ref::paged_attention(mha, {2}));
}

/// The same contents under every cache kind, combined or not, padded or not: the decoded
/// tiles are the same doubles, so the results are identical.
RC_GTEST_PROP(Metamorphic, CacheLayoutsOfTheSameContentsAgree, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.head_size = *test::gen_head_size(DType::kFloat8E4M3);  // valid for every kind and dtype
  const PagedAttentionProblem p = verify::make_attention_problem(spec);
  const ref::PagedCacheLayout& c = p.cache;
  const ref::CacheKind kind =
      *rc::gen::element(ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND);
  const bool combined = *rc::gen::arbitrary<bool>();
  const int64_t pad = *rc::gen::element<int64_t>(0, 1, 5);
  PagedAttentionProblem q = p;
  test::relayout(
      p, q,
      ref::make_cache_layout(kind, c.dtype, c.shape(), verify::uniform_cache_padding(pad), combined,
                             c.scale_kind));
  RC_TAG(std::string(ref::cache_kind_name(c.kind)) + " -> " + ref::cache_kind_name(kind));
  expect_identical(ref::paged_attention(p, {1}), ref::paged_attention(q, {1}));
}

/// An fp8 cache with scales equals the float32 cache that holds code * scale (exact in
/// float32: the builder's scales have at most 9 significant bits).
RC_GTEST_PROP(Metamorphic, Fp8CacheEqualsItsDequantizedFloat32Copy, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.dtype = DType::kFloat32;  // a float32 cache needs float32 queries
  spec.cache_dtype = *rc::gen::element(DType::kFloat8E4M3, DType::kFloat8E5M2);
  spec.scale_kind = *rc::gen::element(ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead);
  spec.head_size = *test::gen_head_size(DType::kFloat8E4M3);
  const PagedAttentionProblem fp8 = verify::make_attention_problem(spec);
  const ref::PagedCacheLayout& c = fp8.cache;
  PagedAttentionProblem f32 = fp8;
  test::replace_cache(f32, ref::make_cache_layout(c.kind, DType::kFloat32, c.shape(), {},
                                                  c.combined, ref::ScaleKind::kNone));
  f32.k_scale.clear();
  f32.v_scale.clear();
  const std::vector<std::byte>& from = test::value_buffer(fp8);
  std::vector<std::byte>& to = test::value_buffer(f32);
  for (int64_t b = 0; b < c.num_blocks; ++b) {
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      const double ks = c.scale_at(fp8.k_scale, h);
      const double vs = c.scale_at(fp8.v_scale, h);
      for (int64_t slot = 0; slot < c.block_size; ++slot) {
        for (int64_t d = 0; d < c.head_size; ++d) {
          const double key = load_element(c.dtype, fp8.key_cache.data(), c.key_at(b, h, slot, d));
          const double value = load_element(c.dtype, from.data(), c.value_at(b, h, slot, d));
          const int64_t k_at = f32.cache.key_at(b, h, slot, d);
          const int64_t v_at = f32.cache.value_at(b, h, slot, d);
          store_element(DType::kFloat32, f32.key_cache.data(), k_at, key * ks);
          store_element(DType::kFloat32, to.data(), v_at, value * vs);
          if (std::isfinite(key)) {  // the product was exact in float32
            RC_ASSERT(load_element(DType::kFloat32, f32.key_cache.data(), k_at) == key * ks);
          }
        }
      }
    }
  }
  expect_identical(ref::paged_attention(fp8, {1}), ref::paged_attention(f32, {1}));
}

RC_GTEST_PROP(Metamorphic, QueryShiftThatMovesAllLogitsEquallyKeepsOutput, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.cache_dtype.reset();  // key dim 0 below must hold exactly 1
  spec.scale_kind = ref::ScaleKind::kNone;
  spec.sinks = false;  // a sink does not move with the logits
  spec.soft_cap = 0;   // nor does a capped logit
  PagedAttentionProblem p = verify::make_attention_problem(spec);
  // Key dim 0 is 1 for every used token, so raising query dim 0 by 2 adds 2 * scale to
  // every logit of every head.
  set_key_dim0(p, [](int64_t, int64_t) { return 1.0; });
  set_query_dim0(p, [](int64_t) { return 0.5; });
  PagedAttentionProblem shifted = p;
  set_query_dim0(shifted, [](int64_t) { return 2.5; });
  const PagedAttentionResult a = ref::paged_attention(p, {1});
  const PagedAttentionResult b = ref::paged_attention(shifted, {1});
  // The two problems round their dot products differently (query dim 0 changes): they agree
  // up to that rounding, bounded from the problems.
  test::expect_within(a, b, std::vector<double>(a.lse.size(), 2.0 * static_cast<double>(p.scale)),
                      test::rounding_bound(p, shifted));
}

/// slope * (t - p) = slope * (t - n + 1) + slope * (n - 1 - p) for a sequence of n tokens: the
/// first term is a key dimension holding t - n + 1 times a query dimension, the second a
/// per-row constant that moves the lse only.
RC_GTEST_PROP(Metamorphic, AlibiEqualsAPositionKeyDimension, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.cache_dtype.reset();  // key dim 0 must hold t - n + 1 exactly
  spec.scale_kind = ref::ScaleKind::kNone;
  spec.share_prefix = false;  // key dim 0 below depends on the sequence
  spec.alibi = true;
  spec.sinks = false;  // a sink does not move with the logits
  spec.soft_cap = 0;   // the cap would apply to the key dimension but not to ALiBi
  for (int32_t& len : spec.context_lens) len = std::min(len, 256);  // |t| <= 256: exact in bf16
  for (std::size_t s = 0; s < spec.query_lens.size(); ++s) {
    if (spec.context_lens[s] > 0) {
      spec.query_lens[s] = std::min(spec.query_lens[s], spec.context_lens[s]);
    }
  }
  PagedAttentionProblem with_alibi = verify::make_attention_problem(spec);
  with_alibi.scale = 0.125f;  // a power of two: slope = scale * v is exact
  const std::vector<double> v_of_head{0.5, 0.25, 1.0, 0.75};
  auto v = [&](int64_t h) { return v_of_head[h % v_of_head.size()]; };
  for (int64_t h = 0; h < with_alibi.num_heads; ++h) {
    with_alibi.features.alibi_slopes[h] = static_cast<float>(0.125 * v(h));
  }
  set_key_dim0(with_alibi, [](int64_t, int64_t) { return 0.0; });
  set_query_dim0(with_alibi, [](int64_t) { return 0.0; });
  // Without ALiBi, key dim 0 = t - n + 1 (exact: |t| <= 256) and query dim 0 = v.
  PagedAttentionProblem with_key = with_alibi;
  with_key.features.alibi_slopes.clear();
  const ref::RaggedBatch& b = with_key.batch;
  set_key_dim0(with_key, [&](int64_t s, int64_t t) {
    return static_cast<double>(t - b.context_lens[s] + 1);
  });
  set_query_dim0(with_key, v);
  std::vector<double> shift(b.num_query_tokens() * with_key.num_heads, 0.0);
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    for (int64_t i = 0; i < b.query_len(s); ++i) {
      const int64_t from_last = b.query_len(s) - 1 - i;  // n - 1 - p
      for (int64_t h = 0; h < with_key.num_heads; ++h) {
        shift[(b.query_begin(s) + i) * with_key.num_heads + h] =
            -static_cast<double>(with_alibi.features.alibi_slopes[h]) * from_last;
      }
    }
  }
  // The two problems sum their logits' terms in different orders (ALiBi last, the key
  // dimension first): they agree up to that rounding, bounded from the larger of the two.
  test::expect_within(ref::paged_attention(with_alibi, {1}), ref::paged_attention(with_key, {1}),
                      shift, test::rounding_bound(with_alibi, with_key));
}

RC_GTEST_PROP(Metamorphic, ThreadCountDoesNotChangeTheResult, ()) {
  const PagedAttentionProblem p = verify::make_attention_problem(random_spec());
  const int threads = *rc::gen::inRange(2, 9);
  expect_identical(ref::paged_attention(p, {1}), ref::paged_attention(p, {threads}));
}

}  // namespace
}  // namespace pagecheck
