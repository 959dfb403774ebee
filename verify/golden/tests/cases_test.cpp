/// The case catalogue covers the list, its inputs are poisoned where unused and random
/// where used, generation is deterministic, and the committed set stays small.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "golden_test_util.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {
namespace {

using Problem = ref::PagedAttentionProblem;

TEST(GoldenCases, CatalogueCoversTheRequiredFeatures) {
  const auto& cases = case_catalogue();
  EXPECT_GE(cases.size(), 24u);
  std::set<std::string> names, features;
  std::set<int64_t> heads, blocks;
  std::set<DType> dtypes;
  for (const CaseDefinition& def : cases) {
    EXPECT_TRUE(names.insert(def.name).second) << "duplicate " << def.name;
    heads.insert(def.head_size);
    blocks.insert(def.block_size);
    dtypes.insert(def.dtype);
    if (def.padding > 0) features.insert(std::string("padded ") + std::to_string(def.family));
    if (def.family != PC_FAMILY_PAGED_ATTENTION) {
      const ref::CacheCopyProblem p = generate_copy_problem(def);
      features.insert(std::to_string(def.family));
      for (int64_t slot : p.slot_mapping) {
        if (slot == -1) features.insert("skip " + std::to_string(def.family));
      }
      continue;
    }
    const Problem p = generate_attention_problem(def);
    const int64_t group = p.num_heads / p.num_kv_heads();
    features.insert(group == 1 ? "MHA" : p.num_kv_heads() == 1 ? "MQA" : "GQA");
    if (!p.alibi_slopes.empty()) features.insert("alibi");
    std::set<int32_t> used;
    for (int64_t s = 0; s < p.num_seqs; ++s) {
      const int64_t len = p.context_lens[static_cast<std::size_t>(s)], bs = p.block_size();
      if (len == 1) features.insert("ctx 1");
      if (len == bs) features.insert("ctx block");
      if (len % bs == bs - 1) features.insert("ctx block-1");
      if (len % bs == 1 && len > 1) features.insert("ctx block+1");
      if (len > 3 * 512) features.insert("4+ partitions of 512");
      if (len > 2 * 512 && len <= 3 * 512) features.insert("3 partitions of 512");
      for (int64_t j = 0; j < (len + bs - 1) / bs; ++j) {
        const int32_t b = p.block_table[static_cast<std::size_t>(s * p.max_blocks_per_seq + j)];
        if (!used.insert(b).second) features.insert("shared blocks");
      }
    }
  }
  EXPECT_TRUE(heads.count(64) && heads.count(80) && heads.count(128) && heads.count(256));
  EXPECT_TRUE(blocks.count(8) && blocks.count(16) && blocks.count(32));
  EXPECT_EQ(dtypes.size(), 3u);
  for (const std::string need :
       {"MHA", "GQA", "MQA", "alibi", "ctx 1", "ctx block", "ctx block-1", "ctx block+1",
        "4+ partitions of 512", "3 partitions of 512", "shared blocks", "1", "2", "skip 1",
        "skip 2", "padded 0", "padded 1", "padded 2"}) {
    EXPECT_TRUE(features.count(need)) << "no case with: " << need;
  }
}

/// Used elements finite, nonzero, of both signs; everything else in the buffer NaN.
void expect_poisoned(const char* what, DType dtype, const std::vector<std::byte>& buffer,
                     const std::vector<bool>& used) {
  int64_t positive = 0, negative = 0;
  for (std::size_t i = 0; i < used.size(); ++i) {
    const double v = load_element(dtype, buffer.data(), static_cast<int64_t>(i));
    if (used[i]) {
      ASSERT_TRUE(std::isfinite(v) && v != 0) << what << " element " << i << " = " << v;
      (v > 0 ? positive : negative)++;
    } else {
      ASSERT_TRUE(std::isnan(v)) << what << " unused element " << i << " = " << v;
    }
  }
  EXPECT_GT(positive, 0) << what;
  EXPECT_GT(negative, 0) << what;
}

TEST(GoldenCases, AttentionInputsArePoisonedOutsideWhatIsUsed) {
  for (const CaseDefinition& def : case_catalogue()) {
    if (def.family != PC_FAMILY_PAGED_ATTENTION) continue;
    SCOPED_TRACE(def.name);
    const Problem p = generate_attention_problem(def);
    const ref::PagedCacheLayout& c = p.cache;
    std::vector<bool> key_used(static_cast<std::size_t>(c.key_span()));
    std::vector<bool> value_used(static_cast<std::size_t>(c.value_span()));
    for (int64_t s = 0; s < p.num_seqs; ++s) {
      const int64_t len = p.context_lens[static_cast<std::size_t>(s)];
      const int64_t blocks = (len + c.block_size - 1) / c.block_size;
      for (int64_t j = 0; j < p.max_blocks_per_seq; ++j) {
        const int32_t b = p.block_table[static_cast<std::size_t>(s * p.max_blocks_per_seq + j)];
        if (j >= blocks) {
          EXPECT_EQ(b, kBlockTablePoison);
          EXPECT_GE(b, c.num_blocks);
          continue;
        }
        for (int64_t t = j * c.block_size; t < std::min(len, (j + 1) * c.block_size); ++t) {
          for (int64_t h = 0; h < c.num_kv_heads; ++h) {
            for (int64_t d = 0; d < c.head_size; ++d) {
              key_used[static_cast<std::size_t>(c.key_offset(b, h, d, t % c.block_size))] = true;
              value_used[static_cast<std::size_t>(c.value_offset(b, h, d, t % c.block_size))] =
                  true;
            }
          }
        }
      }
    }
    std::vector<bool> query_used(static_cast<std::size_t>(p.query_layout.span()));
    for (int64_t s = 0; s < p.num_seqs; ++s) {
      for (int64_t h = 0; h < p.num_heads; ++h) {
        for (int64_t d = 0; d < p.head_size(); ++d) {
          query_used[static_cast<std::size_t>(p.query_layout.offset(s, h, d))] = true;
        }
      }
    }
    expect_poisoned("key_cache", p.dtype, p.key_cache, key_used);
    expect_poisoned("value_cache", p.dtype, p.value_cache, value_used);
    expect_poisoned("query", p.dtype, p.query, query_used);
  }
}

TEST(GoldenCases, GenerationIsDeterministicAndSeedDependent) {
  CaseDefinition def = find_case("pa_mqa_bf16_h128_b16");
  const Problem a = generate_attention_problem(def);
  const Problem b = generate_attention_problem(def);
  EXPECT_TRUE(a.query == b.query && a.key_cache == b.key_cache && a.block_table == b.block_table);
  def.seed += 1;
  const Problem c = generate_attention_problem(def);
  EXPECT_FALSE(a.query == c.query);
  EXPECT_FALSE(a.key_cache == c.key_cache);
}

TEST(GoldenCases, CommittedFixturesStayUnderTheSizeBudget) {
  const std::string dir = PAGECHECK_TEST_GOLDEN_DIR;
  if (!testing::fs::exists(dir + "/" + kManifestName)) {
    GTEST_SKIP() << "no committed goldens in " << dir;
  }
  uintmax_t total = 0;
  for (const auto& item : testing::fs::directory_iterator(dir)) {
    const uintmax_t size = testing::fs::file_size(item.path());
    EXPECT_LT(size, 512u * 1024u) << item.path();
    total += size;
  }
  EXPECT_LT(total, 20u * 1000u * 1000u);
}

TEST(GoldenDevice, VerifyWithoutDeviceReportsItAndReturns3) {
  std::ostringstream out;
  const VariantRegistry empty;
  const int status = verify_goldens_on_device(empty, testing::pristine_goldens(), out);
  if (status != 3) GTEST_SKIP() << "a CUDA device is present: " << out.str();
  EXPECT_NE(out.str().find("no CUDA device"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace pagecheck::verify::golden
