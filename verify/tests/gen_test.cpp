/// Generators: every spec is valid and materializes to a problem that passes ref validate(),
/// poison sits exactly where no kernel may read, regimes and edge cases occur, JSON round-trips.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/gen/materialize.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

bool is_nan(DType dtype, const std::vector<std::byte>& buffer, int64_t index) {
  return std::isnan(load_element(dtype, buffer.data(), index));
}

/// Marks the cache elements (both caches; of a combined cache both in `key`) that belong to
/// readable slots.
void mark_readable(const gen::AttentionSpec& s, const ref::PagedCacheLayout& c,
                   std::vector<bool>& key, std::vector<bool>& value) {
  const std::vector<bool> slots = gen::readable_slots(s);
  std::vector<bool>& values = c.combined ? key : value;
  for (int64_t block = 0; block < c.num_blocks; ++block) {
    for (int64_t slot = 0; slot < c.block_size; ++slot) {
      if (!slots[block * c.block_size + slot]) continue;
      for (int64_t h = 0; h < c.num_kv_heads; ++h) {
        for (int64_t d = 0; d < c.head_size; ++d) {
          key[c.key_at(block, h, slot, d)] = true;
          values[c.value_at(block, h, slot, d)] = true;
        }
      }
    }
  }
}

RC_GTEST_PROP(VerifyGen, AttentionSpecsMaterializeValidWithPoisonInPlace, ()) {
  const auto spec = std::get<gen::AttentionSpec>(*test::small_case(PC_FAMILY_PAGED_ATTENTION));
  RC_TAG(gen::regime_name(spec.regime));
  gen::validate(spec);
  const ref::PagedAttentionProblem p = gen::materialize(spec);
  p.validate();  // ref's own validation
  std::vector<bool> key(p.cache.key_span()), value(p.cache.value_span());
  mark_readable(spec, p.cache, key, value);
  // Read slots finite (fp8: never a NaN code), everything else the cache dtype's poison.
  const DType kv = p.cache.dtype;
  const auto poison = [kv](const std::vector<std::byte>& b, int64_t i) {
    uint32_t bits = 0;
    std::memcpy(&bits, b.data() + i * dtype_size(kv), dtype_size(kv));
    return bits == dtype_info(kv).poison_bits;
  };
  for (int64_t i = 0; i < p.cache.key_span(); ++i) {
    RC_ASSERT(poison(p.key_cache, i) == !key[i]);
    RC_ASSERT(is_nan(kv, p.key_cache, i) == !key[i]);
  }
  for (int64_t i = 0; i < p.cache.value_span(); ++i) {
    RC_ASSERT(poison(p.value_cache, i) == !value[i]);
    RC_ASSERT(is_nan(kv, p.value_cache, i) == !value[i]);
  }
  // Query: logical elements finite, padding (e.g. the K and V parts of a fused QKV) NaN.
  std::vector<bool> logical(p.query_layout.span());
  for (int64_t q = 0; q < p.query_layout.num_tokens; ++q) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      for (int64_t d = 0; d < p.head_size(); ++d) logical[p.query_layout.offset(q, h, d)] = true;
    }
  }
  for (int64_t i = 0; i < p.query_layout.span(); ++i) {
    RC_ASSERT(is_nan(p.dtype, p.query, i) == !logical[i]);
  }
  // Block-table entries past each sequence's last block are outside the pool.
  const ref::RaggedBatch& b = p.batch;
  for (int64_t q = 0; q < b.num_seqs; ++q) {
    for (int64_t blk = gen::used_blocks(spec, q); blk < b.max_blocks_per_seq; ++blk) {
      RC_ASSERT(b.block_table[q * b.max_blocks_per_seq + blk] >= p.cache.num_blocks);
    }
  }
  // The query rows are the spec's.
  RC_ASSERT(b.num_query_tokens() == gen::query_tokens(spec));
  for (int64_t q = 0; q < b.num_seqs; ++q) RC_ASSERT(b.query_len(q) == gen::query_len(spec, q));
}

RC_GTEST_PROP(VerifyGen, ReadingPastTheContextGivesNaN, ()) {
  auto spec = std::get<gen::AttentionSpec>(*test::small_case(PC_FAMILY_PAGED_ATTENTION));
  ref::PagedAttentionProblem p = gen::materialize(spec);
  const ref::PagedAttentionResult good = ref::paged_attention(p, {1});
  for (double v : good.out) RC_ASSERT(std::isfinite(v));
  // One token more in every sequence whose last block has room: that slot is poison, and the
  // last query row attends to it.
  bool extended = false;
  for (int64_t q = 0; q < p.batch.num_seqs; ++q) {
    int32_t& len = p.batch.context_lens[q];
    if (len > 0 && len % p.block_size() != 0) {
      ++len;
      extended = true;
    }
  }
  RC_PRE(extended);
  const ref::PagedAttentionResult bad = ref::paged_attention(p, {1});
  bool any_nan = false;
  for (double v : bad.out) any_nan = any_nan || std::isnan(v);
  RC_ASSERT(any_nan);
}

RC_GTEST_PROP(VerifyGen, CopySpecsMaterializeValidWithPoisonInPlace, ()) {
  const pc_family family =
      *rc::gen::element(PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE);
  const auto spec = std::get<gen::CopySpec>(*test::small_case(family));
  const ref::CacheCopyProblem p = gen::materialize(spec);
  p.validate();
  if (family == PC_FAMILY_GATHER_CACHED_KV) {
    // Slots no token reads are poison in both caches (fp8 read slots never hold a NaN code).
    std::set<int64_t> read(spec.slot_mapping.begin(), spec.slot_mapping.end());
    const ref::PagedCacheLayout& c = p.cache;
    const DType kv = c.dtype;
    const bool any_bits = spec.regime == gen::Regime::kBits && !dtype_info(kv).fp8;
    const std::vector<std::byte>& values = c.combined ? p.key_cache : p.value_cache;
    for (int64_t block = 0; block < c.num_blocks; ++block) {
      for (int64_t slot = 0; slot < c.block_size; ++slot) {
        const bool live = read.count(block * c.block_size + slot) > 0;
        if (live && any_bits) continue;  // random 16/32-bit patterns may be NaN
        RC_ASSERT(is_nan(kv, p.key_cache, c.key_at(block, 0, slot, 0)) == !live);
        RC_ASSERT(is_nan(kv, values, c.value_at(block, 0, slot, 0)) == !live);
      }
    }
  }
}

TEST(VerifyGen, RegimesAndEdgeCasesOccurOverARun) {
  for (pc_family family :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    check::Target target;
    target.caps = test::full_caps(family);
    std::map<std::string, int> regimes, tags;
    const int cases = 200;
    for (int i = 0; i < cases - 1; ++i) {  // the last case is the (absent) large one
      const gen::CaseSpec spec =
          check::generate_case(target, check::case_params(target, 7, cases, i));
      ++regimes[gen::regime_name(std::visit([](const auto& s) { return s.regime; }, spec))];
      for (const auto& t : gen::edge_tags(spec, target.caps)) ++tags[t];
    }
    const std::vector<std::string> expected_regimes =
        family == PC_FAMILY_PAGED_ATTENTION ? std::vector<std::string>{"flat", "peaked", "mixed"}
                                            : std::vector<std::string>{"mixed", "bits"};
    for (const auto& r : expected_regimes)
      EXPECT_GT(regimes[r], 10) << family_name(family) << " " << r;
    for (const auto& t : gen::all_edge_tags(target.caps)) {
      if (t == "large_cache") continue;
      EXPECT_GT(tags[t], 0) << family_name(family) << ": edge case " << t << " never drawn";
    }
  }
}

TEST(VerifyGen, LargeCaseSpansBeyond2To31WithBlocksReferencedThere) {
  for (pc_family family :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    check::Target target;
    target.caps = test::full_caps(family, /*large=*/true);
    for (int64_t cases : {200, 20}) {
      const check::CaseParams params = check::case_params(target, 3, cases, cases - 1);
      ASSERT_TRUE(params.large);
      const gen::CaseSpec spec = check::generate_case(target, params);
      gen::validate(spec);  // no materialization: multi-GiB
      EXPECT_TRUE(gen::is_large(spec)) << gen::describe(spec);
      // Some referenced element lies beyond 2^31.
      int64_t highest = 0;
      if (const auto* a = std::get_if<gen::AttentionSpec>(&spec)) {
        const ref::PagedCacheLayout c = gen::cache_layout(*a);
        for (int32_t e : a->block_table) highest = std::max<int64_t>(highest, e * c.key.block);
      } else {
        const auto& s = std::get<gen::CopySpec>(spec);
        const ref::PagedCacheLayout c = gen::cache_layout(s);
        for (int64_t slot : s.slot_mapping) {
          if (slot >= 0)
            highest = std::max(highest, c.key_at(slot / c.block_size, 0, slot % c.block_size, 0));
        }
      }
      EXPECT_GT(highest, gen::kLargeCacheElements) << gen::describe(spec);
    }
    // Without the capability no large case is drawn.
    check::Target plain;
    plain.caps = test::full_caps(family, false);
    EXPECT_FALSE(check::case_params(plain, 3, 200, 199).large);
  }
}

RC_GTEST_PROP(VerifyGen, SpecJsonRoundTrips, ()) {
  const pc_family family = *rc::gen::element(PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV,
                                             PC_FAMILY_RESHAPE_AND_CACHE);
  const gen::CaseSpec spec = *test::small_case(family);
  const nlohmann::json j = gen::spec_to_json(spec);
  const gen::CaseSpec back = gen::spec_from_json(nlohmann::json::parse(j.dump()));
  RC_ASSERT(gen::spec_to_json(back) == j);
  // Materialization is deterministic.
  if (const auto* a = std::get_if<gen::AttentionSpec>(&spec)) {
    RC_ASSERT(gen::materialize(*a).key_cache ==
              gen::materialize(std::get<gen::AttentionSpec>(back)).key_cache);
  }
}

TEST(VerifyGen, SpecValidationNamesTheField) {
  check::Target target;
  target.caps = test::full_caps(PC_FAMILY_PAGED_ATTENTION);
  auto spec = std::get<gen::AttentionSpec>(
      check::generate_case(target, check::case_params(target, 1, 200, 50)));
  spec.block_table[0] = static_cast<int32_t>(spec.num_blocks);
  try {
    gen::validate(spec);
    FAIL() << "an out-of-pool block was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("block_table[0][0]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gen::spec_from_json(nlohmann::json{{"family", "paged_attention"}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck::verify
