/// CPU-only checks of the fixed cases (run without a GPU, also in CI): every problem is valid,
/// the reference reads no poison (its outputs are finite), and the poison sits where no
/// sequence or token may read: NaN in unused cache slots, NaN rows for slot -1, out-of-range
/// block-table entries past each sequence's last block.
#include <gtest/gtest.h>

#include <cmath>

#include "case_builder.h"
#include "fixed_cases.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::gpu_test {
namespace {

std::vector<AttentionCase> all_attention_cases() {
  std::vector<AttentionCase> v = quick_attention_cases();
  for (auto& c : full_attention_cases()) v.push_back(c);
  return v;
}

std::vector<CopyCase> all_copy_cases() {
  std::vector<CopyCase> v = quick_copy_cases();
  for (auto& c : full_copy_cases()) v.push_back(c);
  return v;
}

TEST(FixedCases, AttentionProblemsAreValidAndPoisonedOutsideTheContext) {
  for (const AttentionCase& c : all_attention_cases()) {
    SCOPED_TRACE(c.name);
    const ref::PagedAttentionProblem p = build_attention_problem(c);
    ASSERT_NO_THROW(p.validate());
    const ref::PagedAttentionResult r = ref::paged_attention(p);
    for (double v : r.out) ASSERT_TRUE(std::isfinite(v));
    // The slot after the context in the last block (when there is one) is NaN in K and V.
    for (int64_t s = 0; s < p.num_seqs; ++s) {
      const int64_t len = p.context_lens[s];
      const int64_t used = (len + p.block_size() - 1) / p.block_size();
      EXPECT_GE(p.block_table[s * p.max_blocks_per_seq + used], p.cache.num_blocks);
      if (len % p.block_size() == 0) continue;
      const int64_t block = p.block_table[s * p.max_blocks_per_seq + used - 1];
      const bool shared = c.shared_prefix && s == 0 && used == 1;
      if (shared) continue;
      EXPECT_TRUE(std::isnan(load_element(p.dtype, p.key_cache.data(),
                                          p.cache.key_offset(block, 0, 0, len % p.block_size()))));
      EXPECT_TRUE(std::isnan(load_element(
          p.dtype, p.value_cache.data(), p.cache.value_offset(block, 0, 0, len % p.block_size()))));
    }
    EXPECT_GT(max_abs_value(p), 0.5);
  }
}

TEST(FixedCases, CopyProblemsAreValidAndPoisoned) {
  for (const CopyCase& c : all_copy_cases()) {
    SCOPED_TRACE(c.name);
    ref::CacheCopyProblem g = build_gather_problem(c);
    ASSERT_NO_THROW(g.validate());
    ref::gather_cached_kv(g);
    const ref::CacheCopyProblem r = build_reshape_problem(c);
    ASSERT_NO_THROW(r.validate());
    for (int64_t t = 0; t < c.num_tokens; ++t) {
      const double k = load_element(c.dtype, g.key.data(), g.key_layout.offset(t, 0, 0));
      const double v = load_element(c.dtype, g.value.data(), g.value_layout.offset(t, 0, 1));
      const double in = load_element(c.dtype, r.key.data(), r.key_layout.offset(t, 0, 0));
      EXPECT_TRUE(std::isfinite(in));
      if (g.slot_mapping[t] < 0) {
        EXPECT_TRUE(std::isnan(k) && std::isnan(v)) << "token " << t << " (slot -1)";
      } else {
        EXPECT_TRUE(std::isfinite(k) && std::isfinite(v) && k != 0 && v != 0) << "token " << t;
      }
    }
  }
}

}  // namespace
}  // namespace pagecheck::gpu_test
