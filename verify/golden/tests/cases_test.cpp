/// The case catalogue: every entry is a valid gen spec covering the list, its
/// materialized inputs are poisoned where unread and finite where read, building is
/// deterministic, and the committed set stays small.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "golden_test_util.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/spec_tables.h"

namespace pagecheck::verify::golden {
namespace {

const gen::AttentionSpec* attention_of(const GoldenCase& c) {
  return std::get_if<gen::AttentionSpec>(&c.spec);
}

TEST(GoldenCases, EverySpecValidatesAndRoundTripsThroughJson) {
  // Schema 1's 35, 22 of every page layout x KV dtype, 6 of the attention features.
  ASSERT_EQ(case_catalogue().size(), 63u);
  for (const GoldenCase& c : case_catalogue()) {
    SCOPED_TRACE(c.name);
    EXPECT_NO_THROW(gen::validate(c.spec));
    const nlohmann::json j = gen::spec_to_json(c.spec);
    EXPECT_EQ(gen::spec_to_json(gen::spec_from_json(j)), j);
    EXPECT_EQ(&find_case(c.name), &c);
  }
  EXPECT_THROW(find_case("no_such_case"), std::invalid_argument);
}

TEST(GoldenCases, CatalogueCoversTheRequiredFeatures) {
  std::set<std::string> names, features;
  std::set<int64_t> heads, blocks;
  std::set<DType> dtypes;
  for (const GoldenCase& c : case_catalogue()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
    const std::string family = family_name(gen::family_of(c.spec));
    if (const auto* copy = std::get_if<gen::CopySpec>(&c.spec)) {
      heads.insert(copy->head_size);
      blocks.insert(copy->block_size);
      dtypes.insert(copy->dtype);
      features.insert(family);
      if (copy->cache.pad.any()) features.insert("padded " + family);
      for (int64_t slot : copy->slot_mapping) {
        if (slot == -1) features.insert("skip " + family);
      }
      continue;
    }
    const gen::AttentionSpec& s = *attention_of(c);
    heads.insert(s.head_size);
    blocks.insert(s.block_size);
    dtypes.insert(s.dtype);
    if (s.cache.pad.any()) features.insert("padded " + family);
    if (s.table_pad > 0) features.insert("strided block table");
    if (s.bound_pad > 0) features.insert("bucketed bound");
    const int64_t group = s.num_heads / s.num_kv_heads;
    features.insert(group == 1 ? "MHA" : s.num_kv_heads == 1 ? "MQA" : "GQA");
    if (s.alibi) features.insert("alibi");
    features.insert(gen::regime_name(s.regime));
    std::set<int32_t> used;
    for (int64_t q = 0; q < s.num_seqs; ++q) {
      const int64_t len = s.context_lens[q], bs = s.block_size;
      if (len == 1) features.insert("ctx 1");
      if (len == bs) features.insert("ctx block");
      if (len % bs == bs - 1) features.insert("ctx block-1");
      if (len % bs == 1 && len > 1) features.insert("ctx block+1");
      if (len > 3 * 512) features.insert("4+ partitions of 512");
      if (len > 2 * 512 && len <= 3 * 512) features.insert("3 partitions of 512");
      for (int64_t j = 0; j < gen::used_blocks(s, q); ++j) {
        if (!used.insert(s.block_table[q * s.max_blocks_per_seq + j]).second) {
          features.insert("shared blocks");
        }
      }
    }
  }
  EXPECT_TRUE(heads.count(64) && heads.count(80) && heads.count(128) && heads.count(256));
  EXPECT_TRUE(blocks.count(8) && blocks.count(16) && blocks.count(32));
  EXPECT_EQ(dtypes.size(), 3u);
  for (const std::string need : {"MHA",
                                 "GQA",
                                 "MQA",
                                 "alibi",
                                 "flat",
                                 "peaked",
                                 "ctx 1",
                                 "ctx block",
                                 "ctx block-1",
                                 "ctx block+1",
                                 "4+ partitions of 512",
                                 "3 partitions of 512",
                                 "shared blocks",
                                 "strided block table",
                                 "bucketed bound",
                                 "gather_cached_kv",
                                 "reshape_and_cache",
                                 "skip gather_cached_kv",
                                 "skip reshape_and_cache",
                                 "padded paged_attention",
                                 "padded gather_cached_kv",
                                 "padded reshape_and_cache"}) {
    EXPECT_TRUE(features.count(need)) << "no case with: " << need;
  }
}

TEST(GoldenCases, CatalogueCoversEveryLayoutAndKvDtypeAndEveryFeature) {
  // Attention: every page layout with every KV dtype; copies: each layout, each fp8 dtype
  // (gathers dequantize, reshapes quantize), per-tensor and per-head scales.
  std::set<std::string> attention, copies, features;
  for (const GoldenCase& c : case_catalogue()) {
    SCOPED_TRACE(c.name);
    const gen::CacheSpec& cache = std::visit([](const auto& s) { return s.cache; }, c.spec);
    const std::string cell =
        std::string(ref::cache_kind_name(cache.kind)) + " " + dtype_name(cache.kv_dtype);
    if (const auto* copy = std::get_if<gen::CopySpec>(&c.spec)) {
      const std::string family = family_name(copy->family);
      copies.insert(family + " " + ref::cache_kind_name(cache.kind));
      copies.insert(family + " " + dtype_name(cache.kv_dtype));
      copies.insert(family + " " + ref::scale_kind_name(cache.scale_kind));
      EXPECT_EQ(copy->dequantize,
                copy->family == PC_FAMILY_GATHER_CACHED_KV && cache.kv_dtype != copy->dtype);
      continue;
    }
    const gen::AttentionSpec& s = *attention_of(c);
    attention.insert(cell);
    attention.insert(ref::scale_kind_name(cache.scale_kind));
    const bool multi = !s.query_lens.empty();
    if (multi) {
      features.insert("multi-token");
      const int32_t longest = *std::max_element(s.query_lens.begin(), s.query_lens.end());
      if (longest == 16) features.insert("q_len 16");
      for (int64_t q = 0; q < s.num_seqs; ++q) {
        if (s.query_lens[q] == s.context_lens[q]) features.insert("q_len = context");
      }
      EXPECT_TRUE(s.causal);
    }
    if (!s.sinks.empty()) features.insert("sinks");
    if (s.window > 0) features.insert("window");
    if (s.soft_cap > 0) features.insert("soft-cap");
    if (!s.sinks.empty() && s.window > 0) features.insert("window + sinks");
    if (s.soft_cap > 0 && multi) features.insert("soft-cap + multi-token");
    for (int32_t ctx : s.context_lens) {
      if (s.window > 0 && ctx > s.window && (ctx - s.window) % s.block_size == 0) {
        features.insert("window on a block edge");
      }
    }
  }
  for (const char* kind : {"x_split", "nhd", "hnd"}) {
    for (const char* kv : {"float16", "bfloat16", "float32", "fp8_e4m3", "fp8_e5m2"}) {
      EXPECT_TRUE(attention.count(std::string(kind) + " " + kv))
          << "no attention golden " << kind << " x " << kv;
    }
  }
  for (const char* scales : {"per_tensor", "per_kv_head"}) EXPECT_TRUE(attention.count(scales));
  for (const char* family : {"gather_cached_kv", "reshape_and_cache"}) {
    for (const char* what :
         {"x_split", "nhd", "hnd", "fp8_e4m3", "fp8_e5m2", "per_tensor", "per_kv_head"}) {
      EXPECT_TRUE(copies.count(std::string(family) + " " + what)) << family << ": no " << what;
    }
  }
  for (const char* need :
       {"multi-token", "q_len 16", "q_len = context", "sinks", "window", "soft-cap",
        "window + sinks", "soft-cap + multi-token", "window on a block edge"}) {
    EXPECT_TRUE(features.count(need)) << "no golden with " << need;
  }
}

TEST(GoldenCases, AttentionInputsAreFiniteWhereReadAndPoisonedElsewhere) {
  for (const GoldenCase& c : case_catalogue()) {
    const gen::AttentionSpec* s = attention_of(c);
    if (s == nullptr) continue;
    SCOPED_TRACE(c.name);
    const ref::PagedAttentionProblem p = gen::materialize(*s);
    const ref::PagedCacheLayout& cache = p.cache;
    const std::vector<bool> readable = gen::readable_slots(*s);
    int64_t finite = 0, poisoned = 0;
    for (int64_t b = 0; b < cache.num_blocks; ++b) {
      for (int64_t slot = 0; slot < cache.block_size; ++slot) {
        const bool read = readable[b * cache.block_size + slot];
        for (int64_t h = 0; h < cache.num_kv_heads; ++h) {
          for (int64_t d = 0; d < cache.head_size; ++d) {
            const double k =
                load_element(cache.dtype, p.key_cache.data(), cache.key_at(b, h, slot, d));
            const double v =
                load_element(cache.dtype, p.value_cache.data(), cache.value_at(b, h, slot, d));
            ASSERT_EQ(std::isfinite(k) && std::isfinite(v), read)
                << "block " << b << " slot " << slot << " head " << h << " dim " << d;
            (read ? finite : poisoned)++;
          }
        }
      }
    }
    EXPECT_GT(finite, 0);
    EXPECT_GT(poisoned, 0) << "no poison: a kernel reading an unused slot would go unnoticed";
    for (int64_t q = 0; q < p.num_seqs(); ++q) {
      const int64_t past = gen::used_blocks(*s, q);
      if (past < p.batch.max_blocks_per_seq) {
        EXPECT_GE(p.batch.block_table[q * p.batch.max_blocks_per_seq + past], cache.num_blocks)
            << "table entry past sequence " << q << "'s last block is inside the pool";
      }
    }
  }
}

TEST(GoldenCases, BuildingIsDeterministicAndSeedDependent) {
  const GoldenCase& c = find_case("pa_mqa_bf16_h128_b16");
  const GoldenFile a = build_golden(c);
  EXPECT_TRUE(describe_differences(a, build_golden(c)).empty());
  GoldenCase other = c;
  std::get<gen::AttentionSpec>(other.spec).content_seed += 1;
  const std::vector<std::string> changes = describe_differences(a, build_golden(other));
  const auto changed = [&](const std::string& what) {
    for (const std::string& line : changes) {
      if (line.rfind(what, 0) == 0) return true;
    }
    return false;
  };
  EXPECT_TRUE(changed("inputs/query")) << ::testing::PrintToString(changes);
  EXPECT_TRUE(changed("inputs/key_cache")) << ::testing::PrintToString(changes);
  EXPECT_TRUE(changed("attribute spec")) << ::testing::PrintToString(changes);
}

TEST(GoldenCases, PlacementSharesPrefixesAndKeepsTheRestDistinct) {
  // Fresh draws each run: the placement rules hold for any seed.
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  gen::AttentionSpec s;
  s.block_size = 8;
  SequencePlacement placement;
  placement.context_lens = {20, 9, 0, 40};
  placement.shared_prefix_blocks = 2;
  placement.seed = seed;
  place_sequences(placement, s);
  EXPECT_EQ(s.max_blocks_per_seq, 5 + 1);
  // seq 0: 3 blocks; seq 1 shares 2 of its 2; seq 2 none; seq 3 shares 2 of 5: 3 + 0 + 3.
  EXPECT_EQ(s.num_blocks, 6 + 2);
  std::set<int32_t> distinct;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    for (int64_t j = 0; j < s.max_blocks_per_seq; ++j) {
      const int32_t e = s.block_table[q * s.max_blocks_per_seq + j];
      if (j >= gen::used_blocks(s, q)) {
        EXPECT_EQ(e, -1);
      } else if (q > 0 && j < 2) {
        EXPECT_EQ(e, s.block_table[j]) << "seq " << q << " block " << j;
      } else {
        EXPECT_TRUE(distinct.insert(e).second) << "block " << e << " used twice";
        EXPECT_GE(e, 0);
        EXPECT_LT(e, s.num_blocks);
      }
    }
  }
  placement.min_blocks = 1000;
  placement.high_blocks = true;
  place_sequences(placement, s);
  EXPECT_EQ(s.num_blocks, 1000);
  for (int32_t e : s.block_table) EXPECT_TRUE(e == -1 || e >= 1000 - 6) << e;
  EXPECT_THROW(distinct_slots(0, 4, 5, seed), std::invalid_argument);
  const std::vector<int64_t> slots = distinct_slots(100, 50, 50, seed);
  EXPECT_EQ(std::set<int64_t>(slots.begin(), slots.end()).size(), 50u);
  EXPECT_EQ(*std::min_element(slots.begin(), slots.end()), 100);
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
