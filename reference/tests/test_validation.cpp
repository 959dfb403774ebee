/// Bad input: every inconsistency raises std::invalid_argument whose message names the
/// argument, before anything is computed or written.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "copy_problem.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck {
namespace {

using ref::CacheCopyProblem;
using ref::CacheKind;
using ref::PagedAttentionProblem;
using ref::ScaleKind;

/// Expects `fn` to throw std::invalid_argument with a message containing `needle`.
void expect_invalid(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one naming \"" << needle << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message \"" << e.what() << "\" does not contain \"" << needle << "\"";
  }
}

/// Entry of the block table past a sequence's last block (never read).
constexpr int32_t kUnused = 0x7fffff00;

/// Two sequences of 40 and 17 tokens (decode), block 16, 4 heads over 2 kv heads, ALiBi, two
/// unused table columns, 6 blocks; the cache is `cache_dtype` (fp8 with per-tensor scales).
PagedAttentionProblem attention(DType cache_dtype = DType::kFloat16,
                                CacheKind kind = CacheKind::kXSplit, bool combined = false) {
  PagedAttentionProblem p;
  p.dtype = DType::kFloat16;
  p.num_heads = 4;
  p.scale = 0.125f;
  const bool fp8 = dtype_info(cache_dtype).fp8;
  p.cache = ref::make_cache_layout(kind, cache_dtype, {6, 2, 64, 16}, {}, combined,
                                   fp8 ? ScaleKind::kPerTensor : ScaleKind::kNone);
  if (fp8) p.k_scale = p.v_scale = {0.5f};
  p.batch.num_seqs = 2;
  p.batch.context_lens = {40, 17};
  p.batch.max_blocks_per_seq = 5;
  p.batch.block_table = {4, 0, 2, kUnused, kUnused, 5, 1, kUnused, kUnused, kUnused};
  p.features.alibi_slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  p.query_layout = ref::TokenLayout::packed(2, 4, 64);
  p.query.resize(p.query_layout.span() * dtype_size(p.dtype));
  const std::size_t kv_bytes = dtype_size(cache_dtype);
  p.key_cache.resize(p.cache.key_span() * kv_bytes);
  p.value_cache.resize(p.cache.value_span() * kv_bytes);
  return p;
}

/// The same batch as prefill: 5 and 1 new tokens (ragged query rows).
PagedAttentionProblem ragged() {
  PagedAttentionProblem p = attention();
  p.batch.query_start = {0, 5, 6};
  p.query_layout = ref::TokenLayout::packed(6, 4, 64);
  p.query.resize(p.query_layout.span() * dtype_size(p.dtype));
  return p;
}

void expect_attention_invalid(const PagedAttentionProblem& p, const std::string& needle) {
  expect_invalid([&] { p.validate(); }, needle);
  expect_invalid([&] { ref::paged_attention(p); }, needle);
}

TEST(Validation, ValidProblemsPass) {
  EXPECT_NO_THROW(attention().validate());
  EXPECT_NO_THROW(ragged().validate());
  EXPECT_NO_THROW(attention(DType::kFloat8E4M3, CacheKind::kNHD).validate());
  EXPECT_NO_THROW(attention(DType::kFloat16, CacheKind::kHND, true).validate());
}

TEST(Validation, UsedBlockIndexOutOfRange) {
  PagedAttentionProblem p = attention();
  p.batch.block_table[1 * 5 + 1] = 99;
  expect_attention_invalid(p, "block_table[1][1] = 99 is outside [0, num_blocks = 6)");
  p = attention();
  p.batch.block_table[0] = -1;
  expect_attention_invalid(p, "block_table[0][0] = -1 is outside");
}

TEST(Validation, ContextLengths) {
  PagedAttentionProblem p = attention();
  p.batch.context_lens[1] = 5 * 16 + 1;
  expect_attention_invalid(p, "context_lens[1] = 81 exceeds max_blocks_per_seq * block_size = 80");
  p = attention();
  p.batch.context_lens[0] = -1;
  expect_attention_invalid(p, "context_lens[0] = -1 must not be negative");
  p = ragged();
  p.batch.context_lens[0] = 4;  // shorter than its 5 query tokens
  expect_attention_invalid(p, "context_lens[0] = 4 is shorter than its query of 5 tokens");
  // A padding row: context 0, its query rows still count, its table row is never read.
  p = ragged();
  p.batch.context_lens[0] = 0;
  p.batch.block_table[0] = -7;
  EXPECT_NO_THROW(p.validate());
}

TEST(Validation, QueryStart) {
  PagedAttentionProblem p = ragged();
  p.batch.query_start = {0, 5};
  expect_attention_invalid(p, "query_start.size() = 2 does not match num_seqs + 1 = 3");
  p = ragged();
  p.batch.query_start = {1, 5, 6};
  expect_attention_invalid(p, "query_start[0] = 1 must be 0");
  p = ragged();
  p.batch.query_start = {0, 7, 6};
  expect_attention_invalid(p, "query_start[2] = 6 is below query_start[1] = 7");
  p = ragged();
  p.batch.query_start = {0, 5, 5};  // a sequence without query rows
  p.query_layout.num_tokens = 5;
  p.query.resize(p.query_layout.span() * dtype_size(p.dtype));
  EXPECT_NO_THROW(p.validate());
  p = ragged();
  p.batch.query_start = {0, 5, 7};
  expect_attention_invalid(
      p, "query_layout.num_tokens = 6 does not match the batch's query tokens = 7");
}

TEST(Validation, HeadSizeNotAMultipleOfTheDimSplit) {
  PagedAttentionProblem p = attention();
  p.cache.head_size = 100;
  expect_attention_invalid(p,
                           "cache layout: head_size = 100 is not a multiple of key.dim_split = 8");
  p = attention();
  p.cache.key.slot = 4;
  expect_attention_invalid(p, "cache layout: key.slot = 4 is smaller than the span 8 of key.dim");
}

TEST(Validation, NumHeadsNotAMultipleOfKvHeads) {
  PagedAttentionProblem p = attention();
  p.num_heads = 3;
  expect_attention_invalid(p, "num_heads = 3 is not a multiple of num_kv_heads = 2");
}

TEST(Validation, Features) {
  PagedAttentionProblem p = attention();
  p.features.alibi_slopes.pop_back();
  expect_attention_invalid(p, "alibi_slopes.size() = 3 does not match num_heads = 4");
  p = attention();
  p.features.alibi_slopes[2] = std::numeric_limits<float>::infinity();
  expect_attention_invalid(p, "alibi_slopes[2]");
  p = attention();
  p.features.sinks = {1.0f, 2.0f};
  expect_attention_invalid(p, "sinks.size() = 2 does not match num_heads = 4");
  p.features.sinks = {1.0f, 2.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  expect_attention_invalid(p, "sinks[2]");
  p = attention();
  p.features.window = -1;
  expect_attention_invalid(p, "window = -1 must not be negative");
  p = attention();
  p.features.soft_cap = -2.0f;
  expect_attention_invalid(p, "soft_cap = -2.000000 must be finite and not negative");
}

TEST(Validation, Dtypes) {
  PagedAttentionProblem p = attention();
  p.dtype = DType::kFloat8E4M3;
  expect_attention_invalid(p, "dtype = fp8_e4m3 cannot be the dtype of a query");
  p = attention();
  p.cache.dtype = DType::kBFloat16;
  expect_attention_invalid(p, "cache.dtype = bfloat16 differs from dtype = float16");
}

TEST(Validation, Scales) {
  PagedAttentionProblem p = attention(DType::kFloat8E5M2);
  p.k_scale.clear();
  expect_attention_invalid(p,
                           "k_scale.size() = 0 does not match 1 entry for scale_kind per_tensor");
  p = attention(DType::kFloat8E5M2);
  p.cache.scale_kind = ScaleKind::kPerKvHead;
  expect_attention_invalid(p, "k_scale.size() = 1 does not match num_kv_heads entries");
  p.k_scale = p.v_scale = {1.0f, 0.0f};
  expect_attention_invalid(p, "k_scale[1] = 0.000000 must be finite and positive");
  p.k_scale = {1.0f, 2.0f};
  p.v_scale = {std::numeric_limits<float>::infinity(), 1.0f};
  expect_attention_invalid(p, "v_scale[0] = inf must be finite and positive");
  p = attention();
  p.k_scale = {1.0f};
  expect_attention_invalid(p, "k_scale.size() = 1 does not match no entries for scale_kind none");
}

TEST(Validation, InconsistentShapes) {
  PagedAttentionProblem p = attention();
  p.query_layout.num_heads = 8;
  expect_attention_invalid(p, "query_layout.num_heads = 8 does not match num_heads = 4");
  p = attention();
  p.batch.block_table.pop_back();
  expect_attention_invalid(p, "block_table.size()");
  p = attention();
  p.batch.context_lens.push_back(3);
  expect_attention_invalid(p, "context_lens.size() = 3 does not match num_seqs = 2");
  p = attention();
  p.query_layout.stride_head = 32;
  expect_attention_invalid(p, "query layout: stride_head = 32 is smaller than head_size");
  p = attention();
  p.batch.block_table_stride = 4;
  expect_attention_invalid(p, "block_table_stride = 4 is below max_blocks_per_seq = 5");
  p = attention();
  p.batch.context_len_bound = 39;
  expect_attention_invalid(p, "context_len_bound = 39 is outside [largest context = 40");
}

TEST(Validation, BufferSizes) {
  PagedAttentionProblem p = attention();
  p.query.resize(p.query.size() - 2);
  expect_attention_invalid(p, "query: buffer holds");
  p = attention();
  p.key_cache.resize(p.key_cache.size() + 2);
  expect_attention_invalid(p, "key_cache: buffer holds");
  p = attention();
  p.value_cache.clear();
  expect_attention_invalid(p, "value_cache: buffer holds 0 bytes");
  p = attention(DType::kFloat8E4M3);  // one byte per cache element
  p.key_cache.resize(p.key_cache.size() * 2);
  expect_attention_invalid(p, "fp8_e4m3 elements");
  p = attention(DType::kFloat16, CacheKind::kNHD, /*combined=*/true);
  p.value_cache.resize(2);  // a combined cache holds V inside key_cache
  expect_attention_invalid(p, "value_cache: buffer holds 2 bytes but the cache layout needs 0");
}

CacheCopyProblem copy(DType cache_dtype = DType::kFloat16, DType dtype = DType::kFloat16) {
  test::CopyCase c;
  c.cache_dtype = cache_dtype;
  c.dtype = dtype;
  if (dtype_info(cache_dtype).fp8) c.scale_kind = ScaleKind::kPerKvHead;
  return test::make_copy(c);
}

/// Expects both copies to reject `p`, leaving every buffer as it was.
void expect_copy_invalid(const CacheCopyProblem& p, const std::string& needle) {
  expect_invalid([&] { p.validate(); }, needle);
  CacheCopyProblem gather = p, reshape = p;
  expect_invalid([&] { ref::gather_cached_kv(gather); }, needle);
  expect_invalid([&] { ref::reshape_and_cache(reshape); }, needle);
  EXPECT_TRUE(gather.key == p.key && gather.value == p.value);
  EXPECT_TRUE(reshape.key_cache == p.key_cache && reshape.value_cache == p.value_cache);
}

TEST(Validation, CopySlotOutOfRange) {
  CacheCopyProblem p = copy();
  EXPECT_NO_THROW(p.validate());
  p.slot_mapping[2] = 1000;
  expect_copy_invalid(p, "slot_mapping[2] = 1000 is outside [-1, num_blocks * block_size = 64)");
  p = copy();
  p.slot_mapping[5] = -2;
  expect_copy_invalid(p, "slot_mapping[5] = -2 is outside");
}

TEST(Validation, CopyInconsistentShapes) {
  CacheCopyProblem p = copy();
  p.key_layout.num_heads = 3;
  expect_copy_invalid(p, "key_layout.num_heads = 3 does not match cache.num_kv_heads = 2");
  p = copy();
  p.value_layout.num_tokens = 5;
  expect_copy_invalid(p, "value_layout.num_tokens = 5 does not match key_layout.num_tokens = 6");
  p = copy();
  p.slot_mapping.pop_back();
  expect_copy_invalid(p, "slot_mapping.size() = 5 does not match key_layout.num_tokens = 6");
  p = copy();
  p.value.resize(2);
  expect_copy_invalid(p, "value: buffer holds 2 bytes");
  p = copy();
  p.cache.head_size = 20;
  expect_copy_invalid(p, "cache layout: head_size = 20 is not a multiple of key.dim_split = 8");
}

TEST(Validation, CopyDtypesAndScales) {
  EXPECT_NO_THROW(copy(DType::kFloat8E4M3, DType::kFloat8E4M3).validate());  // raw codes
  EXPECT_NO_THROW(copy(DType::kFloat8E4M3, DType::kBFloat16).validate());    // converting
  expect_copy_invalid(copy(DType::kFloat32, DType::kFloat16),
                      "cache.dtype = float32 differs from dtype = float16");
  expect_copy_invalid(copy(DType::kFloat8E4M3, DType::kFloat8E5M2),
                      "dtype = fp8_e5m2 cannot be the dtype of a query");
  CacheCopyProblem p = copy();
  p.dequantize = true;
  expect_copy_invalid(p, "dequantize = true needs an fp8 cache");
  p = copy(DType::kFloat8E4M3, DType::kFloat16);
  p.v_scale.pop_back();
  expect_copy_invalid(p, "v_scale.size() = 1 does not match num_kv_heads entries");
  p = copy(DType::kFloat8E4M3, DType::kFloat16);
  p.k_scale[0] = -1.0f;
  expect_copy_invalid(p, "k_scale[0] = -1.000000 must be finite and positive");
}

}  // namespace
}  // namespace pagecheck
