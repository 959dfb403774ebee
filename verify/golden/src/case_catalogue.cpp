/// The named golden cases, each a gen spec with its own seed; keep every file at a few hundred
/// KB. Contents come from gen::materialize (regimes flat and peaked for attention, bits for
/// copies: all three are computed without libm calls whose last bit may differ between
/// platforms, so `golden check` regenerates the inputs bit for bit everywhere). Besides the
/// schema-1 set: every page layout x KV dtype (issue 15) and each attention feature and the
/// combinations window + sinks, soft-cap + multi-token queries (issue 16).
#include <stdexcept>
#include <utility>
#include <variant>

#include "pagecheck/verify/golden_cases.h"
#include "pagecheck/verify/spec_tables.h"

namespace pagecheck::verify::golden {
namespace {

constexpr DType kF16 = DType::kFloat16;
constexpr DType kBF16 = DType::kBFloat16;
constexpr DType kF32 = DType::kFloat32;
constexpr DType kE4M3 = DType::kFloat8E4M3;
constexpr DType kE5M2 = DType::kFloat8E5M2;
constexpr ref::CacheKind kXSplit = ref::CacheKind::kXSplit;
constexpr ref::CacheKind kNHD = ref::CacheKind::kNHD;
constexpr ref::CacheKind kHND = ref::CacheKind::kHND;
constexpr gen::Regime kFlat = gen::Regime::kFlat;
constexpr gen::Regime kPeaked = gen::Regime::kPeaked;

/// Every stride widened by one 16-byte vector (x elements), K and V alike, keeping vector loads
/// aligned.
ref::CachePadding vector_padding(DType dtype) {
  const int64_t x = dtype_x(dtype);
  const ref::TensorPadding p{x, x, x};
  return ref::CachePadding{p, p};
}

/// Sets the page layout and KV dtype of `c`; an fp8 cache gets the scales (one: per tensor,
/// several: per KV head).
void set_cache(gen::CacheSpec& c, ref::CacheKind kind, DType kv_dtype, std::vector<float> k_scale,
               std::vector<float> v_scale) {
  c.kind = kind;
  c.kv_dtype = kv_dtype;
  c.scale_kind = k_scale.empty()       ? ref::ScaleKind::kNone
                 : k_scale.size() == 1 ? ref::ScaleKind::kPerTensor
                                       : ref::ScaleKind::kPerKvHead;
  c.k_scale = std::move(k_scale);
  c.v_scale = std::move(v_scale);
}

/// An attention case under construction: the spec and how its sequences are placed.
class Attention {
 public:
  Attention(const char* name, const char* description, DType dtype, int64_t head, int64_t block,
            int64_t heads, int64_t kv_heads, std::vector<int32_t> context_lens, uint64_t seed,
            gen::Regime regime)
      : spec_(plain_attention_spec(dtype, head, block, heads, kv_heads, seed)) {
    case_.name = name;
    case_.description = description;
    spec_.regime = regime;
    placement_.context_lens = std::move(context_lens);
    placement_.seed = seed;
  }
  Attention& alibi() {
    spec_.alibi = true;
    return *this;
  }
  /// Sequences 1.. reuse sequence 0's first `blocks` blocks.
  Attention& shared(int64_t blocks) {
    placement_.shared_prefix_blocks = blocks;
    return *this;
  }
  /// Padded cache and query strides, a padded block table and a bucketed max_context_len.
  Attention& padded() {
    const int64_t x = dtype_x(spec_.dtype);
    spec_.cache.pad = vector_padding(spec_.dtype);
    spec_.query_pad = gen::TokenPadding{x, x};
    spec_.table_pad = 2;
    spec_.bound_pad = spec_.block_size;
    placement_.extra_columns = 3;
    return *this;
  }
  /// Page layout and KV dtype (fp8: with its scales, see set_cache).
  Attention& cache(ref::CacheKind kind, DType kv_dtype, std::vector<float> k_scale = {},
                   std::vector<float> v_scale = {}) {
    set_cache(spec_.cache, kind, kv_dtype, std::move(k_scale), std::move(v_scale));
    return *this;
  }
  /// One sink logit per query head.
  Attention& sinks(std::vector<float> sinks) {
    spec_.sinks = std::move(sinks);
    return *this;
  }
  /// Sliding window of `w` tokens.
  Attention& window(int64_t w) {
    spec_.window = w;
    return *this;
  }
  /// Logit soft-cap.
  Attention& soft_cap(float cap) {
    spec_.soft_cap = cap;
    return *this;
  }
  /// New query tokens per sequence (causal among them), each at most its context.
  Attention& queries(std::vector<int32_t> lens) {
    spec_.query_lens = std::move(lens);
    return *this;
  }
  operator GoldenCase() {  // NOLINT: the catalogue lists builders
    place_sequences(placement_, spec_);
    case_.spec = spec_;
    return case_;
  }

 private:
  GoldenCase case_;
  gen::AttentionSpec spec_;
  SequencePlacement placement_;
};

/// A copy case: `tokens` distinct random slots of a pool with room for them, `old_tokens` more
/// and 2 spare blocks; `skipped` random tokens get slot -1. Contents: random bit patterns.
GoldenCase copy(pc_family family, const char* name, const char* description, DType dtype,
                int64_t head, int64_t block, int64_t kv_heads, int64_t tokens, int64_t skipped,
                int64_t old_tokens, uint64_t seed, bool padded = false) {
  const int64_t blocks = (tokens + block - 1) / block + (old_tokens + block - 1) / block + 2;
  gen::CopySpec s = plain_copy_spec(family, dtype, head, block, kv_heads, blocks, seed);
  s.regime = gen::Regime::kBits;
  s.slot_mapping = distinct_slots(0, s.num_blocks * block, tokens, seed);
  for (int64_t t : distinct_slots(0, tokens, skipped, seed + 1)) s.slot_mapping[t] = -1;
  if (padded) {
    const int64_t x = dtype_x(dtype);
    s.cache.pad = vector_padding(dtype);
    s.key_pad = s.value_pad = gen::TokenPadding{x, x};
  }
  return GoldenCase{name, description, s};
}

/// `c` with its cache in layout `kind` and dtype `kv_dtype` (see set_cache); a gather from an
/// fp8 cache dequantizes into the case's dtype, a reshape into one quantizes.
GoldenCase with_cache(GoldenCase c, ref::CacheKind kind, DType kv_dtype,
                      std::vector<float> k_scale = {}, std::vector<float> v_scale = {}) {
  auto& s = std::get<gen::CopySpec>(c.spec);
  set_cache(s.cache, kind, kv_dtype, std::move(k_scale), std::move(v_scale));
  s.dequantize = s.family == PC_FAMILY_GATHER_CACHED_KV && kv_dtype != s.dtype;
  return c;
}

/// Cases of every page layout x KV dtype (x-split of the 16/32-bit dtypes: the schema-1 set).
std::vector<GoldenCase> layout_cases() {
  constexpr pc_family kGather = PC_FAMILY_GATHER_CACHED_KV;
  constexpr pc_family kReshape = PC_FAMILY_RESHAPE_AND_CACHE;
  using A = Attention;
  return {
      A("pa_nhd_f16_h128_b16", "NHD cache, GQA", kF16, 128, 16, 4, 2, {37, 16}, 0x2b8b9fc1e3a4d5f6,
        kPeaked)
          .cache(kNHD, kF16),
      A("pa_nhd_bf16_h64_b16", "NHD cache in bfloat16", kBF16, 64, 16, 4, 4, {33, 15},
        0x3c9cafd2f4b5e607, kFlat)
          .cache(kNHD, kBF16),
      A("pa_nhd_f32_h64_b8", "NHD cache in float32, MQA", kF32, 64, 8, 4, 1, {19, 8},
        0x4dadb0e305c6f718, kPeaked)
          .cache(kNHD, kF32),
      A("pa_hnd_f16_h64_b16", "HND cache", kF16, 64, 16, 4, 4, {31, 17}, 0x5ebec1f416d70829,
        kPeaked)
          .cache(kHND, kF16),
      A("pa_hnd_bf16_h128_b8", "HND cache in bfloat16, GQA", kBF16, 128, 8, 4, 2, {25},
        0x6fcfd20527e8193a, kFlat)
          .cache(kHND, kBF16),
      A("pa_hnd_f32_h64_b16", "HND cache in float32", kF32, 64, 16, 2, 2, {40, 3},
        0x70d0e31638f92a4b, kPeaked)
          .cache(kHND, kF32),
      A("pa_xsplit_e4m3_f16_h64_b16", "fp8 e4m3 x-split cache, per-tensor scales", kF16, 64, 16, 4,
        2, {35, 16}, 0x81e1f4274a0a3b5c, kPeaked)
          .cache(kXSplit, kE4M3, {0.03125f}, {0.0078125f}),
      A("pa_xsplit_e5m2_bf16_h64_b16", "fp8 e5m2 x-split cache, per-head scales", kBF16, 64, 16, 4,
        2, {29, 17}, 0x92f205385b1b4c6d, kFlat)
          .cache(kXSplit, kE5M2, {0.5f, 0.001953125f}, {4.0f, 0.0625f}),
      A("pa_nhd_e4m3_bf16_h128_b16", "fp8 e4m3 NHD cache, per-head scales", kBF16, 128, 16, 4, 2,
        {33, 9}, 0xa30316496c2c5d7e, kPeaked)
          .cache(kNHD, kE4M3, {0.0625f, 2.0f}, {0.00390625f, 0.25f}),
      A("pa_nhd_e5m2_f16_h64_b8", "fp8 e5m2 NHD cache, per-tensor scales", kF16, 64, 8, 2, 1,
        {21, 8}, 0xb414275a7d3d6e8f, kPeaked)
          .cache(kNHD, kE5M2, {0.125f}, {16.0f}),
      A("pa_hnd_e4m3_f16_h64_b16", "fp8 e4m3 HND cache, per-tensor scales", kF16, 64, 16, 4, 4,
        {30, 16}, 0xc525386b8e4e7f90, kFlat)
          .cache(kHND, kE4M3, {0.015625f}, {1.0f}),
      A("pa_hnd_e5m2_bf16_h128_b16", "fp8 e5m2 HND cache, per-head scales", kBF16, 128, 16, 4, 2,
        {26, 17}, 0xd636497c9f5f80a1, kPeaked)
          .cache(kHND, kE5M2, {0.25f, 0.0078125f}, {0.03125f, 8.0f}),
      with_cache(copy(kGather, "gather_nhd_f16_h128_b16", "gather from an NHD cache", kF16, 128, 16,
                      2, 30, 3, 0, 0xe7475a8da07091b2),
                 kNHD, kF16),
      with_cache(copy(kGather, "gather_hnd_bf16_h64_b8", "gather from an HND cache", kBF16, 64, 8,
                      2, 25, 2, 0, 0xf8586b9eb181a2c3),
                 kHND, kBF16),
      with_cache(copy(kGather, "gather_xsplit_e4m3_f32_h64_b16",
                      "gather dequantizing an fp8 e4m3 x-split cache into float32", kF32, 64, 16, 2,
                      20, 2, 0, 0x09697cafc292b3d4),
                 kXSplit, kE4M3, {0.0625f}, {2.0f}),
      with_cache(copy(kGather, "gather_nhd_e4m3_f16_h64_b16",
                      "gather dequantizing an fp8 e4m3 NHD cache, per-head scales", kF16, 64, 16, 2,
                      24, 3, 0, 0x1a7a8db0d3a3c4e5),
                 kNHD, kE4M3, {0.5f, 0.0078125f}, {0.125f, 1.0f}),
      with_cache(
          copy(kGather, "gather_hnd_e5m2_bf16_h64_b8", "gather dequantizing an fp8 e5m2 HND cache",
               kBF16, 64, 8, 2, 20, 2, 0, 0x2b8b9ec1e4b4d5f6),
          kHND, kE5M2, {0.25f}, {0.03125f}),
      with_cache(copy(kReshape, "reshape_nhd_bf16_h64_b16", "reshape into an NHD cache", kBF16, 64,
                      16, 2, 30, 3, 20, 0x3c9cafd2f5c5e607),
                 kNHD, kBF16),
      with_cache(copy(kReshape, "reshape_hnd_f16_h128_b8", "reshape into an HND cache", kF16, 128,
                      8, 2, 20, 2, 10, 0x4dadb0e306d6f718),
                 kHND, kF16),
      with_cache(copy(kReshape, "reshape_xsplit_e5m2_f32_h64_b16",
                      "reshape quantizing float32 into an fp8 e5m2 x-split cache", kF32, 64, 16, 2,
                      24, 2, 16, 0x5ebec1f417e70829),
                 kXSplit, kE5M2, {0.125f}, {4.0f}),
      with_cache(copy(kReshape, "reshape_nhd_e5m2_bf16_h64_b8",
                      "reshape quantizing into an fp8 e5m2 NHD cache, per-head scales", kBF16, 64,
                      8, 2, 20, 2, 8, 0x6fcfd20528f8193a),
                 kNHD, kE5M2, {1.0f, 0.00390625f}, {0.0625f, 8.0f}),
      with_cache(copy(kReshape, "reshape_hnd_e4m3_f16_h64_b16",
                      "reshape quantizing into an fp8 e4m3 HND cache", kF16, 64, 16, 2, 26, 3, 16,
                      0x70d0e31639092a4b),
                 kHND, kE4M3, {0.03125f}, {0.5f}),
  };
}

/// One case per attention feature (issue 16) and the combinations engines serve.
std::vector<GoldenCase> feature_cases() {
  using A = Attention;
  return {
      A("pa_sinks_f16_h64_b16", "sinks per head, near, far above and far below the logits", kF16,
        64, 16, 4, 2, {40, 9}, 0x81e1f4274a1a3b5c, kPeaked)
          .sinks({2.5f, -3.0f, 40.0f, -40.0f}),
      A("pa_window_bf16_h128_b16", "sliding window of 18 ending on a block edge (50 - 18 = 32)",
        kBF16, 128, 16, 4, 2, {50, 7, 33}, 0x92f205385b2b4c6d, kPeaked)
          .window(18),
      A("pa_soft_cap_f16_h64_b8", "soft-cap 5 below the logits' spread", kF16, 64, 8, 4, 4,
        {30, 12}, 0xa30316496c3c5d7e, kPeaked)
          .soft_cap(5.0f),
      A("pa_multi_token_f16_h64_b16", "multi-token queries (16, 1, 5 = the whole context), causal",
        kF16, 64, 16, 4, 2, {40, 17, 5}, 0xb414275a7d4d6e8f, kPeaked)
          .queries({16, 1, 5}),
      A("pa_window_sinks_bf16_h64_b16", "window of 16 with sinks", kBF16, 64, 16, 4, 2, {45, 10},
        0xc525386b8e5e7f90, kPeaked)
          .window(16)
          .sinks({1.5f, -2.0f, 25.0f, -25.0f}),
      A("pa_soft_cap_multi_token_f32_h80_b16", "soft-cap 30 with 8 and 16 new tokens, causal", kF32,
        80, 16, 4, 1, {30, 16}, 0xd636497c9f6f80a1, kPeaked)
          .soft_cap(30.0f)
          .queries({8, 16}),
  };
}

std::vector<GoldenCase> build_catalogue() {
  constexpr pc_family kGather = PC_FAMILY_GATHER_CACHED_KV;
  constexpr pc_family kReshape = PC_FAMILY_RESHAPE_AND_CACHE;
  using A = Attention;
  return {
      // Context-length edges around one block.
      A("pa_ctx1_f16_h128_b16", "context length 1 in every sequence, MHA", kF16, 128, 16, 4, 4,
        {1, 1, 1}, 0x6a09e667f3bcc908, kFlat),
      A("pa_one_block_f16_h128_b16", "exactly one full block per sequence, MHA", kF16, 128, 16, 4,
        4, {16, 16}, 0xbb67ae8584caa73b, kPeaked),
      A("pa_block_minus1_bf16_h64_b16", "one and two blocks minus one token, GQA", kBF16, 64, 16, 4,
        2, {15, 31}, 0x3c6ef372fe94f82b, kPeaked),
      A("pa_block_plus1_f16_h64_b16", "one and two blocks plus one token, MHA", kF16, 64, 16, 2, 2,
        {17, 33}, 0xa54ff53a5f1d36f1, kPeaked),
      A("pa_block_edges_f32_h64_b8", "contexts 1, 7, 8, 9, 16, 17 with block 8", kF32, 64, 8, 4, 4,
        {1, 7, 8, 9, 16, 17}, 0x510e527fade682d1, kFlat),
      // Head grouping.
      A("pa_gqa_f16_h128_b16", "GQA: 8 query heads over 2 kv heads", kF16, 128, 16, 8, 2, {37, 100},
        0x9b05688c2b3e6c1f, kPeaked),
      A("pa_mqa_bf16_h128_b16", "MQA: 8 query heads over 1 kv head", kBF16, 128, 16, 8, 1, {45, 64},
        0x1f83d9abfb41bd6b, kPeaked),
      A("pa_mha_f32_h128_b32", "MHA in float32 with block 32", kF32, 128, 32, 2, 2, {40, 70},
        0x5be0cd19137e2179, kFlat),
      // ALiBi.
      A("pa_alibi_f16_h64_b16", "ALiBi, MHA", kF16, 64, 16, 8, 8, {50, 23}, 0xcbbb9d5dc1059ed8,
        kPeaked)
          .alibi(),
      A("pa_alibi_gqa_bf16_h128_b32", "ALiBi with GQA in bfloat16", kBF16, 128, 32, 8, 2, {77},
        0x629a292a367cd507, kFlat)
          .alibi(),
      A("pa_alibi_mqa_f32_h80_b16", "ALiBi with MQA, head size 80", kF32, 80, 16, 4, 1, {33, 60},
        0x9159015a3070dd17, kPeaked)
          .alibi(),
      // Head sizes.
      A("pa_h80_f16_b16", "head size 80 (not a power of two)", kF16, 80, 16, 4, 2, {41, 19},
        0x152fecd8f70e5939, kPeaked),
      A("pa_h80_bf16_b8", "head size 80, block 8", kBF16, 80, 8, 4, 4, {29}, 0x67332667ffc00b31,
        kFlat),
      A("pa_h256_bf16_b16", "head size 256", kBF16, 256, 16, 4, 2, {35, 16}, 0x8eb44a8768581511,
        kPeaked),
      A("pa_h256_f16_b32", "head size 256, block 32, MQA", kF16, 256, 32, 2, 1, {65},
        0xdb0c2e0d64f98fa7, kFlat),
      A("pa_h256_f32_b8", "head size 256 in float32, block 8", kF32, 256, 8, 2, 2, {23},
        0x47b5481dbefa4fa4, kPeaked),
      // Long contexts over several 512-token split-K partitions.
      A("pa_long_f16_h64_b16", "1537 tokens: three full 512-token partitions + 1", kF16, 64, 16, 2,
        1, {1537}, 0x428a2f98d728ae22, kPeaked),
      A("pa_long_bf16_h64_b32", "1025 and 513 tokens, MQA, block 32", kBF16, 64, 32, 4, 1,
        {1025, 513}, 0x7137449123ef65cd, kFlat),
      A("pa_long_alibi_f16_h64_b16", "1100 tokens with ALiBi", kF16, 64, 16, 2, 1, {1100},
        0xb5c0fbcfec4d3b2f, kPeaked)
          .alibi(),
      A("pa_partition_edges_f16_h64_b8", "511, 512 and 513 tokens around a partition", kF16, 64, 8,
        2, 1, {511, 512, 513}, 0xe9b5dba58189dbbc, kFlat),
      // Shared blocks (prefix sharing), padded strides, softmax shape.
      A("pa_shared_blocks_f16_h128_b16", "3 sequences share 2 prefix blocks", kF16, 128, 16, 4, 2,
        {48, 40, 60}, 0x3956c25bf348b538, kPeaked)
          .shared(2),
      A("pa_shared_blocks_bf16_h64_b8", "3 sequences share 2 prefix blocks", kBF16, 64, 8, 2, 2,
        {20, 17, 33}, 0x59f111f1b605d019, kFlat)
          .shared(2),
      A("pa_padded_f16_h128_b16", "every cache and query stride padded, strided block table", kF16,
        128, 16, 4, 2, {30, 47}, 0x923f82a4af194f9b, kPeaked)
          .padded(),
      A("pa_padded_alibi_bf16_h80_b8", "padded strides, ALiBi, head size 80", kBF16, 80, 8, 4, 4,
        {9, 25}, 0xab1c5ed5da6d8118, kPeaked)
          .padded()
          .alibi(),
      A("pa_padded_f32_h64_b32", "padded strides in float32", kF32, 64, 32, 2, 1, {70},
        0xd807aa98a3030242, kFlat)
          .padded(),
      A("pa_peaked_f16_h128_b16", "peaked softmax: a few keys dominate", kF16, 128, 16, 4, 2,
        {100, 57}, 0x12835b0145706fbe, kPeaked),
      A("pa_flat_bf16_h128_b16", "nearly uniform softmax over 200 tokens", kBF16, 128, 16, 2, 1,
        {200}, 0x243185be4ee4b28c, kFlat),
      // gather_cached_kv: cache -> contiguous; rows with slot -1 keep their contents.
      copy(kGather, "gather_f16_h128_b16", "gather with 5 skipped slots", kF16, 128, 16, 2, 40, 5,
           0, 0x550c7dc3d5ffb4e2),
      copy(kGather, "gather_padded_bf16_h64_b8", "gather, padded strides", kBF16, 64, 8, 4, 30, 3,
           0, 0x72be5d74f27b896f, true),
      copy(kGather, "gather_f32_h256_b32", "gather in float32, head size 256", kF32, 256, 32, 1, 50,
           4, 0, 0x80deb1fe3b1696b1),
      copy(kGather, "gather_f16_h80_b16", "gather, head size 80, no skips", kF16, 80, 16, 2, 33, 0,
           0, 0x9bdc06a725c71235),
      // reshape_and_cache: contiguous -> cache over older contents; slot -1 skips.
      copy(kReshape, "reshape_f16_h128_b16", "reshape with 6 skipped slots", kF16, 128, 16, 2, 40,
           6, 30, 0xc19bf174cf692694),
      copy(kReshape, "reshape_padded_bf16_h80_b32", "reshape, padded strides, head size 80", kBF16,
           80, 32, 2, 25, 3, 20, 0xe49b69c19ef14ad2, true),
      copy(kReshape, "reshape_f32_h64_b8", "reshape in float32, block 8", kF32, 64, 8, 4, 37, 4, 10,
           0xefbe4786384f25e3),
      copy(kReshape, "reshape_bf16_h256_b16", "reshape, head size 256, one kv head", kBF16, 256, 16,
           1, 20, 2, 0, 0x0fc19dc68b8cd5b5),
  };
}

std::vector<GoldenCase> full_catalogue() {
  std::vector<GoldenCase> all = build_catalogue();
  for (std::vector<GoldenCase> more : {layout_cases(), feature_cases()}) {
    all.insert(all.end(), more.begin(), more.end());
  }
  return all;
}

}  // namespace

const std::vector<GoldenCase>& case_catalogue() {
  static const std::vector<GoldenCase> catalogue = full_catalogue();
  return catalogue;
}

const GoldenCase& find_case(const std::string& name) {
  std::string known;
  for (const GoldenCase& c : case_catalogue()) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("unknown golden case '" + name + "' (known: " + known + ")");
}

}  // namespace pagecheck::verify::golden
