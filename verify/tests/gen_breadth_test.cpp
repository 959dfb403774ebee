/// Generator breadth (issue 13): a default run (200 cases per variant, seed 1) reaches served
/// models' head counts, padded table rows, loose host bounds, split-K edges at the default
/// partition sizes 256/512/1024 (for variants that declare none),
/// extreme logits and large copies, each often enough; every drawn spec validates; extreme
/// cases materialize to finite inputs whose logits reach about 1e4 with a finite tolerance.
// GCC 12 warns, wrongly, that findLocalMin's rc::Maybe<Shrinkable> may be used uninitialized
// (RapidCheck's header code, instantiated here; as in verify/check/src/shrink.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/gen/spec_shrink.h"
#include "pagecheck/verify/tolerance.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

/// The specs of a default run of one variant, without its multi-GiB cases (covered by gen_test).
std::vector<gen::CaseSpec> default_run(const gen::VariantCaps& caps) {
  return test::default_run(caps, test::LargeCases::kSkip);
}

using test::tag_histogram;

/// Caps as the built-in decode variants declare them (head sizes 64-256, every dtype).
gen::VariantCaps builtin_like(pc_family family) {
  return gen::make_caps(
      "builtin_like", family, {64, 80, 96, 112, 128, 192, 256}, {8, 16, 32},
      test::kDecodeCaps & ~(family == PC_FAMILY_PAGED_ATTENTION ? 0u : uint64_t{PC_CAP_ALIBI}));
}

/// Least counts per default run of the breadth tags.
const std::map<std::string, int>& attention_minimums() {
  static const std::map<std::string, int> m{{"kv_row>512", 6},
                                            {"kv_row>1024", 3},
                                            {"group=npow2", 5},
                                            {"group>=16", 2},
                                            {"mqa_heads>=64", 2},
                                            {"heads>=64", 6},
                                            {"table_stride>width", 10},
                                            {"bound>max_ctx", 10},
                                            {"split_edge@256", 5},
                                            {"split_edge@512", 3},
                                            {"split_edge@1024", 2},
                                            {"extreme_logits", 10},
                                            {"kv_pairs>=128@ctx>=512", 3},
                                            {"rows>512@ctx>=512", 1}};
  return m;
}

const std::map<std::string, int>& copy_minimums() {
  static const std::map<std::string, int> m{{"kv_row>512", 6},    {"kv_row>1024", 3},
                                            {"tokens>=1024", 3},  {"kv_elements>=2^21", 2},
                                            {"spread_blocks", 5}, {"whole_block", 5}};
  return m;
}

void expect_breadth(const gen::VariantCaps& caps) {
  const std::vector<gen::CaseSpec> specs = default_run(caps);
  for (const auto& s : specs) ASSERT_NO_THROW(gen::validate(s)) << gen::describe(s);
  const std::map<std::string, int> tags = tag_histogram(specs, caps);
  const auto& minimums =
      caps.family == PC_FAMILY_PAGED_ATTENTION ? attention_minimums() : copy_minimums();
  std::string all;
  for (const auto& [tag, n] : tags) all += " " + tag + "=" + std::to_string(n);
  std::printf("%s %s:%s\n", caps.name.c_str(), family_name(caps.family), all.c_str());
  for (const auto& [tag, least] : minimums) {
    const auto it = tags.find(tag);
    EXPECT_GE(it == tags.end() ? 0 : it->second, least)
        << caps.name << " " << family_name(caps.family) << ": " << tag << " too rare;" << all;
  }
}

TEST(VerifyGenBreadth, DefaultRunReachesEveryEdgeOftenEnough) {
  for (pc_family family :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    expect_breadth(builtin_like(family));
    expect_breadth(test::full_caps(family));
  }
}

/// A grid case of a default run (no shrinking): at least 8 sequences (a wide case has at most
/// 2) over at least 128 (sequence, kv head) pairs.
bool is_grid(const gen::AttentionSpec& s) {
  return s.num_seqs >= 8 && s.num_seqs * s.num_kv_heads >= 128;
}

TEST(VerifyGenBreadth, WideCasesStaySmallInTokens) {
  const std::vector<gen::CaseSpec> specs = default_run(builtin_like(PC_FAMILY_PAGED_ATTENTION));
  for (const auto& spec : specs) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    if (s.num_heads <= 40 && s.num_kv_heads < 16) continue;  // ordinary heads reach 40
    if (is_grid(s)) continue;  // GridCasesFillADeviceWithLongRowsWithinTheCpuBudget
    EXPECT_LE(gen::largest_context(s), 4 * s.block_size) << gen::describe(spec);
    EXPECT_LE(s.num_seqs, 2) << gen::describe(spec);
  }
}

TEST(VerifyGenBreadth, GridCasesFillADeviceWithLongRowsWithinTheCpuBudget) {
  // Many (sequence, kv head) pairs with rows of 512+ tokens: where launch rules that size the
  // grid to the device flip (one block per pair, one pass or split-K). Decode only, head sizes
  // up to 64 where declared, at most 640 (sequence, head) rows: the CPU reference stays fast.
  int grids = 0, long_rows = 0, many_rows = 0;
  for (const auto& spec : default_run(builtin_like(PC_FAMILY_PAGED_ATTENTION))) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    if (!is_grid(s)) continue;
    ++grids;
    const int64_t longest = gen::largest_context(s);
    if (longest >= 512) ++long_rows;
    if (longest >= 512 && s.num_seqs * s.num_heads > 512) ++many_rows;
    EXPECT_LE(s.head_size, 64) << gen::describe(spec);
    EXPECT_TRUE(s.query_lens.empty()) << gen::describe(spec);
    EXPECT_LE(s.num_seqs * s.num_heads, 640) << gen::describe(spec);
    EXPECT_LE(longest, 1024 + 6 * s.block_size) << gen::describe(spec);
  }
  EXPECT_GE(grids, 2);
  EXPECT_GE(long_rows, grids * 3 / 4) << "grid cases without a row of 512+ tokens";
  EXPECT_GE(many_rows, 1);
}

TEST(VerifyGenBreadth, PaddedRowsPointAtPoisonAndTheBoundReachesTheKernel) {
  int padded = 0, bounded = 0;
  for (const auto& spec : default_run(test::full_caps(PC_FAMILY_PAGED_ATTENTION))) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    if (s.table_pad == 0 && s.bound_pad == 0) continue;
    const ref::PagedAttentionProblem p = gen::materialize(s);
    const ref::RaggedBatch& batch = p.batch;
    EXPECT_EQ(batch.table_stride(), s.max_blocks_per_seq + s.table_pad);
    EXPECT_EQ(batch.host_max_context_len(), gen::largest_context(s) + s.bound_pad);
    EXPECT_LE(batch.host_max_context_len(), s.max_blocks_per_seq * s.block_size);
    const std::vector<int32_t> table = batch.strided_block_table();
    ASSERT_EQ(static_cast<int64_t>(table.size()), s.num_seqs * batch.table_stride());
    for (int64_t q = 0; q < s.num_seqs; ++q) {
      for (int64_t b = 0; b < batch.table_stride(); ++b) {
        const int32_t e = table[q * batch.table_stride() + b];
        if (b < s.max_blocks_per_seq) {
          EXPECT_EQ(e, batch.block_table[q * s.max_blocks_per_seq + b]);
          continue;
        }
        // Padding: a block of the pool that holds nothing but poison.
        ASSERT_GE(e, 0);
        ASSERT_LT(e, p.cache.num_blocks);
        for (int64_t slot = 0; slot < p.block_size(); ++slot) {
          EXPECT_TRUE(std::isnan(
              load_element(p.cache.dtype, p.key_cache.data(), p.cache.key_at(e, 0, slot, 0))));
        }
      }
    }
    padded += s.table_pad > 0;
    bounded += s.bound_pad > 0;
  }
  EXPECT_GT(padded, 5);
  EXPECT_GT(bounded, 5);
}

/// Largest |logit| and the largest gap below the maximum, over every (sequence, head) of the
/// sequences' first query rows (fp8 keys are their codes times their scale).
std::pair<double, double> logit_range(const ref::PagedAttentionProblem& p) {
  double largest = 0, gap = 0;
  const int64_t group = p.num_heads / p.num_kv_heads();
  const ref::RaggedBatch& b = p.batch;
  for (int64_t q = 0; q < b.num_seqs; ++q) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const int64_t kv = h / group;
      const double k_scale = p.k_scale.empty() ? 1.0 : p.k_scale[p.k_scale.size() == 1 ? 0 : kv];
      std::vector<double> logits;
      for (int64_t t = 0; t < b.context_lens[q]; ++t) {
        const int32_t block = b.block_table[q * b.max_blocks_per_seq + t / p.block_size()];
        double dot = 0;
        for (int64_t d = 0; d < p.head_size(); ++d) {
          dot +=
              load_element(p.dtype, p.query.data(), p.query_layout.offset(b.query_begin(q), h, d)) *
              load_element(p.cache.dtype, p.key_cache.data(),
                           p.cache.key_at(block, kv, t % p.block_size(), d)) *
              k_scale;
        }
        logits.push_back(p.scale * dot);
      }
      if (logits.empty()) continue;
      const double max = *std::max_element(logits.begin(), logits.end());
      for (double l : logits) {
        largest = std::max(largest, std::fabs(l));
        gap = std::max(gap, max - l);
      }
    }
  }
  return {largest, gap};
}

TEST(VerifyGenBreadth, ExtremeLogitsReachTenThousandWithFiniteInputsAndTolerance) {
  int extreme = 0, big = 0, gapped = 0;
  for (pc_family family : {PC_FAMILY_PAGED_ATTENTION}) {
    for (const auto& spec : default_run(test::decode_caps(family))) {
      auto s = std::get<gen::AttentionSpec>(spec);
      if (s.regime != gen::Regime::kExtreme) continue;
      ++extreme;
      const ref::PagedAttentionProblem p = gen::materialize(s);
      const auto [largest, gap] = logit_range(p);
      big += largest > 4000;
      gapped += gap > 9000;
      const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
      const std::vector<double> tol = attention_tolerance(p, r, {}, 1);
      for (std::size_t i = 0; i < tol.size(); ++i) {
        ASSERT_TRUE(std::isfinite(r.out[i])) << gen::describe(spec);
        // Finite, and below the values' range (|v| <= 1): the bound still tells outputs apart.
        ASSERT_TRUE(std::isfinite(tol[i]) && tol[i] < 0.5) << tol[i] << gen::describe(spec);
      }
    }
  }
  EXPECT_GE(extreme, 10);
  EXPECT_GE(big, extreme / 2);
  EXPECT_GE(gapped, 3);
}

}  // namespace
}  // namespace pagecheck::verify

namespace pagecheck::verify {
namespace {

TEST(VerifyGenBreadth, ProblemsCarryTheStrideAndTheBoundAndRejectBadOnes) {
  gen::AttentionSpec s;
  s.block_size = 8;
  s.context_lens = {9};
  s.max_blocks_per_seq = 3;
  s.num_blocks = 3;
  s.block_table = {1, 0, -1};
  s.table_pad = 2;
  s.bound_pad = 7;  // 16 <= 3 * 8
  ref::PagedAttentionProblem p = gen::materialize(s);
  EXPECT_EQ(p.batch.table_stride(), 5);
  EXPECT_EQ(p.batch.host_max_context_len(), 16);
  EXPECT_EQ(p.batch.strided_block_table(),
            (std::vector<int32_t>{1, 0, gen::kUnusedTableEntry, 2, 2}));
  p.batch.block_table_stride = 2;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.batch.block_table_stride = 0;  // the width
  p.batch.context_len_bound = 25;  // above 3 * 8
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.batch.context_len_bound = 8;  // below the context
  EXPECT_THROW(p.validate(), std::invalid_argument);
  s.bound_pad = 16;  // the spec says so too, naming the field
  try {
    gen::validate(s);
    FAIL() << "a bound above the table was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bound_pad"), std::string::npos) << e.what();
  }
  // Specs written before either field existed read as the plain stride and the exact bound.
  nlohmann::json j = gen::spec_to_json(s);
  j.erase("table_pad");
  j.erase("bound_pad");
  const auto old = std::get<gen::AttentionSpec>(gen::spec_from_json(j));
  EXPECT_EQ(old.table_pad, 0);
  EXPECT_EQ(old.bound_pad, 0);
}

}  // namespace
}  // namespace pagecheck::verify

namespace pagecheck::verify {
namespace {

TEST(VerifyGenBreadth, ShrinkingPaddedRowsKeepsAPoisonedBlockToPointAt) {
  // A "bug" that needs padded rows and two sequences: the shrunk case keeps both, its pool is
  // the referenced blocks plus one unread block, and the padding points at that block.
  int shrunk_cases = 0;
  for (const auto& spec : default_run(test::decode_caps(PC_FAMILY_PAGED_ATTENTION))) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    if (s.table_pad == 0 || s.num_seqs < 2 || gen::is_large(spec)) continue;
    const auto min = rc::shrinkable::findLocalMin(gen::shrinkable_spec(spec), [](const auto& c) {
      const auto& a = std::get<gen::AttentionSpec>(c);
      return a.table_pad > 0 && a.num_seqs >= 2;
    });
    const auto& m = std::get<gen::AttentionSpec>(min.first);
    EXPECT_EQ(m.num_seqs, 2);
    EXPECT_EQ(m.context_lens, (std::vector<int32_t>{1, 1}));
    EXPECT_LE(m.num_blocks, 3) << gen::describe(min.first);
    const ref::PagedAttentionProblem p = gen::materialize(m);
    ASSERT_GE(p.batch.block_table_padding, 0) << gen::describe(min.first);
    ASSERT_LT(p.batch.block_table_padding, p.cache.num_blocks);
    ++shrunk_cases;
  }
  EXPECT_GT(shrunk_cases, 5);
}

}  // namespace
}  // namespace pagecheck::verify
