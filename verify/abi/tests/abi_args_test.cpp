// The vocabulary -> ABI v2 converter (CPU only): every field of every struct, from problems
// whose data buffers are empty (the converter reads descriptors only), with fresh random shapes.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "pagecheck/verify/abi_args.h"

namespace pagecheck::verify {
namespace {

/// Fresh random draws; the seed is printed with every failure.
struct Random {
  uint64_t seed = std::random_device{}();
  std::mt19937_64 rng{seed};
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  }
  template <typename T>
  T* pointer() {
    return reinterpret_cast<T*>(static_cast<uintptr_t>((rng() | 0x1000) & ~uint64_t{0xFF}));
  }
};

ref::PagedCacheLayout random_cache(Random& r, ref::CacheKind kind, DType dtype, bool combined,
                                   ref::ScaleKind scales) {
  const ref::CacheShape shape{r.between(1, 64), r.between(1, 8), 16 * r.between(4, 8),
                              8 << r.between(0, 2)};
  ref::TensorPadding pad{r.between(0, 3) * 16, r.between(0, 3) * 16, r.between(0, 1) * 16};
  ref::CachePadding padding{pad, combined ? pad : ref::TensorPadding{}};
  return ref::make_cache_layout(kind, dtype, shape, padding, combined, scales);
}

/// The six strides {block, head, slot, group, dim, dim_split} of a pc_cache_strides or a
/// ref::CacheTensorStrides (both name them alike), so that one EXPECT_EQ compares and prints all.
template <typename Strides>
std::array<int64_t, 6> strides_of(const Strides& s) {
  return {s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
}

/// A token tensor's ABI fields (`what`: its name): the caller's pointer and the layout's token
/// and head strides.
void expect_tokens(const void* data, int64_t stride_token, int64_t stride_head, const void* pointer,
                   const ref::TokenLayout& layout, const char* what) {
  EXPECT_EQ(data, pointer) << what;
  EXPECT_EQ(stride_token, layout.stride_token) << what;
  EXPECT_EQ(stride_head, layout.stride_head) << what;
}

void expect_cache(const pc_kv_cache& got, const ref::PagedCacheLayout& want, const float* k_scale,
                  const float* v_scale) {
  EXPECT_EQ(got.struct_size, sizeof(pc_kv_cache));
  EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind));
  EXPECT_EQ(static_cast<int>(got.dtype), static_cast<int>(want.dtype));
  EXPECT_EQ(static_cast<int>(got.scale_kind), static_cast<int>(want.scale_kind));
  EXPECT_EQ(got.num_blocks, want.num_blocks);
  EXPECT_EQ(got.num_kv_heads, want.num_kv_heads);
  EXPECT_EQ(got.head_size, want.head_size);
  EXPECT_EQ(got.block_size, want.block_size);
  EXPECT_EQ(strides_of(got.key), strides_of(want.key)) << "key";
  EXPECT_EQ(strides_of(got.value), strides_of(want.value)) << "value";
  EXPECT_EQ(got.combined != 0, want.combined);
  EXPECT_EQ(got.value_base, want.combined ? want.value_base : 0);
  EXPECT_EQ(got.k_scale, k_scale);
  EXPECT_EQ(got.v_scale, v_scale);
}

/// A prefill-style problem with every feature, descriptors only (no tensor contents).
ref::PagedAttentionProblem full_problem(Random& r, ref::CacheKind kind, bool combined) {
  ref::PagedAttentionProblem p;
  p.dtype = r.rng() % 2 ? DType::kFloat16 : DType::kBFloat16;
  p.cache = random_cache(r, kind, DType::kFloat8E4M3, combined, ref::ScaleKind::kPerKvHead);
  p.num_heads = p.cache.num_kv_heads * r.between(1, 4);
  p.scale = static_cast<float>(r.between(1, 1000)) / 997.0f;
  ref::RaggedBatch& b = p.batch;
  b.num_seqs = r.between(1, 9);
  b.query_start = {0};
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    const int64_t q = r.between(1, 6);
    b.query_start.push_back(static_cast<int32_t>(b.query_start.back() + q));
    b.context_lens.push_back(static_cast<int32_t>(q + r.between(0, 100)));
  }
  b.max_blocks_per_seq = 200 / p.cache.block_size + 1;
  b.block_table_stride = b.max_blocks_per_seq + r.between(0, 5);
  b.context_len_bound = b.max_context_len() + r.between(0, 7);
  const int64_t rows = b.num_query_tokens();
  p.query_layout = ref::TokenLayout{rows, p.num_heads, p.head_size(),
                                    p.num_heads * p.head_size() + 16 * r.between(0, 3),
                                    p.head_size() + 16 * r.between(0, 1)};
  p.features.alibi_slopes.assign(static_cast<std::size_t>(p.num_heads), 0.5f);
  p.features.sinks.assign(static_cast<std::size_t>(p.num_heads), 1.0f);
  p.features.window = r.between(1, 64);
  p.features.soft_cap = 30.0f;
  p.features.causal = r.rng() % 2 == 0;
  return p;
}

AttentionPointers random_pointers(Random& r) {
  AttentionPointers q;
  q.query = r.pointer<const void>();
  q.key_cache = r.pointer<const void>();
  q.value_cache = r.pointer<const void>();
  q.query_start = r.pointer<const int32_t>();
  q.context_lens = r.pointer<const int32_t>();
  q.block_table = r.pointer<const int32_t>();
  q.alibi_slopes = r.pointer<const float>();
  q.sinks = r.pointer<const float>();
  q.k_scale = r.pointer<const float>();
  q.v_scale = r.pointer<const float>();
  q.out = r.pointer<void>();
  return q;
}

TEST(AbiArgs, AttentionEveryField) {
  Random r;
  SCOPED_TRACE("seed " + std::to_string(r.seed));
  for (ref::CacheKind kind :
       {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND}) {
    const ref::PagedAttentionProblem p = full_problem(r, kind, false);
    ASSERT_TRUE(p.query.empty() && p.key_cache.empty());  // descriptors only
    const int64_t rows = p.batch.num_query_tokens();
    const ref::TokenLayout out{rows, p.num_heads, p.head_size(),
                               p.num_heads * p.head_size() + 16 * r.between(0, 2),
                               p.head_size() + 8 * r.between(0, 2)};
    const AttentionPointers q = random_pointers(r);
    const pc_paged_attention_args a = attention_args(p, out, q);
    EXPECT_EQ(a.struct_size, sizeof a);
    EXPECT_EQ(static_cast<int>(a.dtype), static_cast<int>(p.dtype));
    EXPECT_EQ(a.num_heads, p.num_heads);
    EXPECT_EQ(a.scale, p.scale);
    expect_tokens(a.query, a.query_stride_token, a.query_stride_head, q.query, p.query_layout,
                  "query");
    EXPECT_EQ(a.key_cache, q.key_cache);
    EXPECT_EQ(a.value_cache, q.value_cache);
    expect_cache(a.cache, p.cache, q.k_scale, q.v_scale);
    EXPECT_EQ(a.batch.struct_size, sizeof a.batch);
    EXPECT_EQ(a.batch.num_seqs, p.batch.num_seqs);
    EXPECT_EQ(a.batch.num_query_tokens, p.batch.query_start.back());
    EXPECT_EQ(a.batch.max_query_len, p.batch.max_query_len());
    EXPECT_EQ(a.batch.query_start, q.query_start);
    EXPECT_EQ(a.batch.context_lens, q.context_lens);
    EXPECT_EQ(a.batch.block_table, q.block_table);
    EXPECT_EQ(a.batch.block_table_stride, p.batch.block_table_stride);
    EXPECT_EQ(a.batch.max_blocks_per_seq, p.batch.max_blocks_per_seq);
    EXPECT_EQ(a.batch.max_context_len, p.batch.context_len_bound);
    EXPECT_EQ(a.features.struct_size, sizeof a.features);
    EXPECT_EQ(a.features.alibi_slopes, q.alibi_slopes);
    EXPECT_EQ(a.features.sinks, q.sinks);
    EXPECT_EQ(a.features.window, p.features.window);
    EXPECT_EQ(a.features.soft_cap, p.features.soft_cap);
    EXPECT_EQ(a.features.causal != 0, p.features.causal);
    expect_tokens(a.out, a.out_stride_token, a.out_stride_head, q.out, out, "out");
  }
}

TEST(AbiArgs, DecodeDropsWhatTheProblemDoesNotHave) {
  Random r;
  SCOPED_TRACE("seed " + std::to_string(r.seed));
  ref::PagedAttentionProblem p;
  p.dtype = DType::kFloat32;
  p.cache = random_cache(r, ref::CacheKind::kXSplit, DType::kFloat32, false, ref::ScaleKind::kNone);
  p.num_heads = p.cache.num_kv_heads;
  p.batch.num_seqs = r.between(1, 20);
  p.batch.context_lens.assign(static_cast<std::size_t>(p.batch.num_seqs), 17);
  p.batch.max_blocks_per_seq = 3;
  p.query_layout = ref::TokenLayout::packed(p.batch.num_seqs, p.num_heads, p.head_size());
  const AttentionPointers q = random_pointers(r);  // more pointers than the problem needs
  const pc_paged_attention_args a = attention_args(p, p.query_layout, q);
  EXPECT_EQ(a.batch.num_query_tokens, p.batch.num_seqs);
  EXPECT_EQ(a.batch.max_query_len, 1);
  EXPECT_EQ(a.batch.query_start, nullptr);
  EXPECT_EQ(a.batch.block_table_stride, 3);  // table_stride(): the dense width
  EXPECT_EQ(a.batch.max_context_len, 17);    // host_max_context_len(): the largest context
  EXPECT_EQ(a.features.alibi_slopes, nullptr);
  EXPECT_EQ(a.features.sinks, nullptr);
  EXPECT_EQ(a.features.window, 0);
  EXPECT_EQ(a.features.soft_cap, 0.0f);
  EXPECT_EQ(a.features.causal, 1);
  expect_cache(a.cache, p.cache, nullptr, nullptr);
}

TEST(AbiArgs, CombinedCachesPointIntoTheKeyBuffer) {
  Random r;
  SCOPED_TRACE("seed " + std::to_string(r.seed));
  ref::PagedAttentionProblem p = full_problem(r, ref::CacheKind::kNHD, true);
  ASSERT_TRUE(p.cache.combined);
  AttentionPointers q = random_pointers(r);
  const ref::TokenLayout out =
      ref::TokenLayout::packed(p.batch.num_query_tokens(), p.num_heads, p.head_size());
  const pc_paged_attention_args a = attention_args(p, out, q);
  EXPECT_EQ(a.cache.combined, 1);
  EXPECT_EQ(a.cache.value_base, p.cache.value_base);
  EXPECT_EQ(static_cast<const char*>(a.value_cache),
            static_cast<const char*>(q.key_cache) + p.cache.value_base * 1);  // fp8: 1 byte
}

TEST(AbiArgs, BadInputNamesTheArgument) {
  Random r;
  SCOPED_TRACE("seed " + std::to_string(r.seed));
  const ref::PagedAttentionProblem p = full_problem(r, ref::CacheKind::kXSplit, false);
  const ref::TokenLayout out =
      ref::TokenLayout::packed(p.batch.num_query_tokens(), p.num_heads, p.head_size());
  auto message = [&](AttentionPointers q, const ref::TokenLayout& layout) -> std::string {
    try {
      attention_args(p, layout, q);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  for (auto field : {&AttentionPointers::query_start, &AttentionPointers::block_table}) {
    AttentionPointers q = random_pointers(r);
    q.*field = nullptr;
    const std::string m = message(q, out);
    if (field == &AttentionPointers::query_start) {
      EXPECT_NE(m.find("pointers.query_start is NULL"), std::string::npos) << m;
    } else {
      EXPECT_EQ(m, "");  // mandatory pointers are the kernels' to check
    }
  }
  AttentionPointers q = random_pointers(r);
  q.sinks = nullptr;
  EXPECT_NE(message(q, out).find("pointers.sinks"), std::string::npos);
  q = random_pointers(r);
  q.alibi_slopes = nullptr;
  EXPECT_NE(message(q, out).find("pointers.alibi_slopes"), std::string::npos);
  q = random_pointers(r);
  q.v_scale = nullptr;
  EXPECT_NE(message(q, out).find("v_scale"), std::string::npos);
  ref::TokenLayout wrong = out;
  wrong.num_tokens += 1;
  EXPECT_NE(message(random_pointers(r), wrong).find("out_layout"), std::string::npos);
}

ref::CacheCopyProblem copy_problem(Random& r, bool combined) {
  ref::CacheCopyProblem p;
  p.cache = random_cache(r, ref::CacheKind::kHND, DType::kFloat8E5M2, combined,
                         ref::ScaleKind::kPerTensor);
  p.dtype = DType::kBFloat16;
  p.dequantize = true;
  const int64_t tokens = r.between(1, 50);
  const int64_t width = p.cache.num_kv_heads * p.cache.head_size;
  p.key_layout = ref::TokenLayout{tokens, p.cache.num_kv_heads, p.cache.head_size,
                                  width + 16 * r.between(0, 2), p.cache.head_size};
  p.value_layout = ref::TokenLayout{tokens, p.cache.num_kv_heads, p.cache.head_size, width,
                                    p.cache.head_size + 8 * r.between(0, 2)};
  return p;
}

CopyPointers copy_pointers(Random& r) {
  CopyPointers c;
  c.key_cache = r.pointer<void>();
  c.value_cache = r.pointer<void>();
  c.slot_mapping = r.pointer<const int64_t>();
  c.key = r.pointer<void>();
  c.value = r.pointer<void>();
  c.k_scale = r.pointer<const float>();
  c.v_scale = r.pointer<const float>();
  return c;
}

TEST(AbiArgs, GatherAndReshapeEveryField) {
  Random r;
  SCOPED_TRACE("seed " + std::to_string(r.seed));
  for (bool combined : {false, true}) {
    const ref::CacheCopyProblem p = copy_problem(r, combined);
    const CopyPointers c = copy_pointers(r);
    const void* value_cache =
        combined ? static_cast<const char*>(c.key_cache) + p.cache.value_base : c.value_cache;
    const pc_gather_args g = gather_args(p, c);
    EXPECT_EQ(g.struct_size, sizeof g);
    EXPECT_EQ(static_cast<int>(g.dtype), static_cast<int>(p.dtype));
    EXPECT_EQ(g.dequantize, 1);
    EXPECT_EQ(g.num_tokens, p.num_tokens());
    EXPECT_EQ(g.key_cache, c.key_cache);
    EXPECT_EQ(g.value_cache, value_cache);
    expect_cache(g.cache, p.cache, c.k_scale, c.v_scale);
    EXPECT_EQ(g.slot_mapping, c.slot_mapping);
    expect_tokens(g.key_out, g.key_stride_token, g.key_stride_head, c.key, p.key_layout, "key");
    expect_tokens(g.value_out, g.value_stride_token, g.value_stride_head, c.value, p.value_layout,
                  "value");

    const pc_reshape_and_cache_args s = reshape_args(p, c);
    EXPECT_EQ(s.struct_size, sizeof s);
    EXPECT_EQ(static_cast<int>(s.dtype), static_cast<int>(p.dtype));
    EXPECT_EQ(s.num_tokens, p.num_tokens());
    expect_tokens(s.key, s.key_stride_token, s.key_stride_head, c.key, p.key_layout, "key");
    expect_tokens(s.value, s.value_stride_token, s.value_stride_head, c.value, p.value_layout,
                  "value");
    EXPECT_EQ(s.key_cache, c.key_cache);
    EXPECT_EQ(s.value_cache, value_cache);
    expect_cache(s.cache, p.cache, c.k_scale, c.v_scale);
    EXPECT_EQ(s.slot_mapping, c.slot_mapping);
  }
  ref::CacheCopyProblem p = copy_problem(r, false);
  p.value_layout.num_heads += 1;
  EXPECT_THROW(gather_args(p, copy_pointers(r)), std::invalid_argument);
  EXPECT_THROW(reshape_args(p, copy_pointers(r)), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck::verify
