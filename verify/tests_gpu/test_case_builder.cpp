/// CPU-only checks of the fixed cases (run without a GPU, also in CI): every spec validates and
/// materializes to a valid problem whose reference output is finite (the reference reads no
/// poison), and each case keeps what its name promises: shared blocks are shared, padded caches
/// are padded, strided tensors are strided, skipped tokens are skipped, peaked cases are
/// peaked.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "case_builder.h"
#include "fixed_cases.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/gen/materialize.h"

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

bool named(const std::string& name, const char* word) {
  return name.find(word) != std::string::npos;
}

/// True when some physical block appears in two sequences' rows of the table.
bool shares_a_block(const gen::AttentionSpec& s) {
  std::set<int32_t> seen;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    std::set<int32_t> mine;
    for (int64_t j = 0; j < gen::used_blocks(s, q); ++j) {
      mine.insert(s.block_table[q * s.max_blocks_per_seq + j]);
    }
    for (int32_t b : mine) {
      if (!seen.insert(b).second) return true;
    }
  }
  return false;
}

TEST(FixedCases, AttentionCasesAreValidFiniteAndKeepTheirIntent) {
  std::set<std::string> names;
  for (const AttentionCase& c : all_attention_cases()) {
    SCOPED_TRACE(::testing::PrintToString(c));
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate name";
    const gen::AttentionSpec& s = c.spec;
    ASSERT_NO_THROW(gen::validate(s));
    const ref::PagedAttentionProblem p = gen::materialize(s);
    ASSERT_NO_THROW(p.validate());
    const ref::PagedAttentionResult r = ref::paged_attention(p);
    for (double v : r.out) ASSERT_TRUE(std::isfinite(v));
    EXPECT_EQ(named(c.name, "shared"), shares_a_block(s));
    EXPECT_EQ(named(c.name, "padded"), !p.cache.packed());
    if (named(c.name, "alibi")) {
      EXPECT_FALSE(p.features.alibi_slopes.empty());
    }
    if (named(c.name, "peaked")) {
      EXPECT_EQ(s.regime, gen::Regime::kPeaked);
    }
    if (named(c.name, "strided") || named(c.name, "fused_q")) {
      EXPECT_GT(p.query_layout.stride_token, p.num_heads * p.head_size());
    }
    EXPECT_EQ(device_out_layout(s).has_value(), s.out_pad.any());
  }
}

TEST(FixedCases, CopyCasesAreValidAndKeepTheirIntent) {
  std::set<std::string> names;
  for (const CopyCase& c : all_copy_cases()) {
    SCOPED_TRACE(::testing::PrintToString(c));
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate name";
    int64_t skipped = 0;
    for (int64_t slot : c.spec.slot_mapping) skipped += slot == -1 ? 1 : 0;
    EXPECT_LT(skipped, static_cast<int64_t>(c.spec.slot_mapping.size()));
    for (pc_family family : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
      ref::CacheCopyProblem p = gen::materialize(for_family(c, family));
      ASSERT_NO_THROW(p.validate());
      EXPECT_EQ(named(c.name, "padded"), !p.cache.packed());
      EXPECT_EQ(named(c.name, "strided"),
                p.key_layout.stride_token != p.cache.num_kv_heads * p.cache.head_size);
      if (family == PC_FAMILY_GATHER_CACHED_KV) {
        const std::vector<std::byte> before = p.key;
        ref::gather_cached_kv(p);
        EXPECT_FALSE(before == p.key) << "the gather wrote nothing";
      }
    }
  }
}

}  // namespace
}  // namespace pagecheck::gpu_test
