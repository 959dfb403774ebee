/// Bad input: every inconsistency raises std::invalid_argument whose message names the
/// argument, before anything is computed or written.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/selfcheck_problems.h"

namespace pagecheck {
namespace {

using ref::CacheCopyProblem;
using ref::PagedAttentionProblem;

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

/// Two sequences of 40 and 17 tokens, block 16, 4 heads over 2 kv heads, float16.
PagedAttentionProblem attention() {
  verify::AttentionSpec spec;
  spec.num_heads = 4;
  spec.num_kv_heads = 2;
  spec.context_lens = {40, 17};
  spec.extra_table_cols = 2;
  spec.alibi = true;
  return verify::make_attention_problem(spec);
}

void expect_attention_invalid(const PagedAttentionProblem& p, const std::string& needle) {
  expect_invalid([&] { p.validate(); }, needle);
  expect_invalid([&] { ref::paged_attention(p); }, needle);
}

TEST(Validation, ValidProblemPassesAndPoisonedUnusedEntriesAreIgnored) {
  const PagedAttentionProblem p = attention();
  EXPECT_NO_THROW(p.validate());
  // Columns past each sequence's last block hold out-of-range poison from the builder.
  bool poisoned = false;
  for (int32_t entry : p.block_table) poisoned |= entry < 0 || entry >= p.cache.num_blocks;
  EXPECT_TRUE(poisoned);
}

TEST(Validation, UsedBlockIndexOutOfRange) {
  PagedAttentionProblem p = attention();
  p.block_table[1 * p.max_blocks_per_seq + 1] = 99;
  expect_attention_invalid(p, "block_table[1][1] = 99 is outside [0, num_blocks = " +
                                  std::to_string(p.cache.num_blocks) + ")");
  p = attention();
  p.block_table[0] = -1;
  expect_attention_invalid(p, "block_table[0][0] = -1 is outside");
}

TEST(Validation, ContextLongerThanTheBlockTable) {
  PagedAttentionProblem p = attention();
  p.context_lens[1] = static_cast<int32_t>(p.max_blocks_per_seq * 16 + 1);
  expect_attention_invalid(p, "context_lens[1] = " + std::to_string(p.context_lens[1]) +
                                  " exceeds max_blocks_per_seq * block_size = " +
                                  std::to_string(p.max_blocks_per_seq * 16));
}

TEST(Validation, ContextOfZero) {
  PagedAttentionProblem p = attention();
  p.context_lens[0] = 0;
  expect_attention_invalid(p, "context_lens[0] = 0 must be at least 1");
}

TEST(Validation, HeadSizeNotAMultipleOfX) {
  PagedAttentionProblem p = attention();
  p.cache.head_size = 100;
  expect_attention_invalid(p, "cache layout: head_size 100 is not a multiple of x = 8 for float16");
  p = attention();
  p.cache.x = 4;
  expect_attention_invalid(p, "cache layout: x = 4 does not match");
}

TEST(Validation, NumHeadsNotAMultipleOfKvHeads) {
  PagedAttentionProblem p = attention();
  p.num_heads = 3;
  expect_attention_invalid(p, "num_heads = 3 is not a multiple of num_kv_heads = 2");
}

TEST(Validation, AlibiLength) {
  PagedAttentionProblem p = attention();
  p.alibi_slopes.pop_back();
  expect_attention_invalid(p, "alibi_slopes.size() = 3 does not match num_heads = 4");
  p = attention();
  p.alibi_slopes[2] = std::numeric_limits<float>::infinity();
  expect_attention_invalid(p, "alibi_slopes[2]");
}

TEST(Validation, InconsistentShapes) {
  PagedAttentionProblem p = attention();
  p.query_layout.num_heads = 8;
  expect_attention_invalid(p, "query_layout.num_heads = 8 does not match num_heads = 4");
  p = attention();
  p.block_table.pop_back();
  expect_attention_invalid(p, "block_table.size()");
  p = attention();
  p.context_lens.push_back(3);
  expect_attention_invalid(p, "context_lens.size() = 3 does not match num_seqs = 2");
  p = attention();
  p.query_layout.stride_head = 32;
  expect_attention_invalid(p, "query layout: stride_head = 32 is smaller than head_size");
  p = attention();
  p.cache.key_stride_slot = 4;
  expect_attention_invalid(p, "cache layout: key_stride_slot = 4 is smaller than x");
  p = attention();
  p.cache.value_stride_head = 10;
  expect_attention_invalid(p, "cache layout: value_stride_head = 10");
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
}

CacheCopyProblem copy() {
  verify::CopySpec spec;
  spec.num_tokens = 6;
  spec.skip_fraction = 0.0;
  return verify::make_copy_problem(spec);
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
  expect_copy_invalid(p, "cache layout: head_size 20 is not a multiple of x = 8");
}

}  // namespace
}  // namespace pagecheck
