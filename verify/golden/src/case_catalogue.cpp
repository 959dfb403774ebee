/// The named golden cases, each a gen spec with its own seed; keep every file at a few hundred
/// KB. Contents come from gen::materialize (regimes flat and peaked for attention, bits for
/// copies: all three are computed without libm calls whose last bit may differ between
/// platforms, so `golden check` regenerates the inputs bit for bit everywhere).
#include <stdexcept>

#include "pagecheck/verify/golden_cases.h"
#include "pagecheck/verify/spec_tables.h"

namespace pagecheck::verify::golden {
namespace {

constexpr DType kF16 = DType::kFloat16;
constexpr DType kBF16 = DType::kBFloat16;
constexpr DType kF32 = DType::kFloat32;
constexpr gen::Regime kFlat = gen::Regime::kFlat;
constexpr gen::Regime kPeaked = gen::Regime::kPeaked;

/// Every stride widened by one 16-byte vector (x elements), K and V alike, keeping vector loads
/// aligned.
ref::CachePadding vector_padding(DType dtype) {
  const int64_t x = dtype_x(dtype);
  const ref::TensorPadding p{x, x, x};
  return ref::CachePadding{p, p};
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

}  // namespace

const std::vector<GoldenCase>& case_catalogue() {
  static const std::vector<GoldenCase> catalogue = build_catalogue();
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
