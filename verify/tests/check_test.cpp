/// Comparisons: the attention tolerance accepts the reference rounded to the dtype and a
/// low-precision split-K emulation, and rejects bug-like outputs (context off by one, scale
/// applied twice, wrong kv head) computed with the reference on a modified problem; copies
/// are compared bit for bit (a single flipped bit fails).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/check/case_runner.h"
#include "pagecheck/verify/check/compare.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/tolerance.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

/// Output of a simulated variant on `p` (packed storage bytes).
std::vector<std::byte> simulate(const std::string& name, const ref::PagedAttentionProblem& p) {
  static const std::unique_ptr<check::CaseBackend> backend = check::make_sim_backend();
  for (const auto& v : backend->variants()) {
    if (v.caps.name == name) return backend->run_attention(v, p, p.query_layout, 0).out;
  }
  throw std::logic_error("no sim variant " + name);
}

/// The caps a simulated variant declares.
gen::VariantCaps sim_caps(const std::string& name) {
  const std::unique_ptr<check::CaseBackend> backend = check::make_sim_backend();
  for (const auto& v : backend->variants()) {
    if (v.caps.name == name) return v.caps;
  }
  throw std::logic_error("no sim variant " + name);
}

struct Checked {
  ref::PagedAttentionProblem problem;
  ref::PagedAttentionResult reference;
  std::vector<double> tolerance;
};

Checked prepare(const gen::AttentionSpec& spec) {
  Checked c{gen::materialize(spec), {}, {}};
  c.reference = ref::paged_attention(c.problem, {1});
  c.tolerance = verify::attention_tolerance(c.problem, c.reference, {}, 1);
  return c;
}

/// A decode case (the simulations of bugs are decode kernels) with contexts up to
/// `max_context`.
gen::AttentionSpec small_attention(int max_context) {
  const auto spec =
      std::get<gen::AttentionSpec>(*test::small_decode_case(PC_FAMILY_PAGED_ATTENTION));
  for (int32_t len : spec.context_lens) RC_PRE(len <= max_context);
  return spec;
}

RC_GTEST_PROP(VerifyCheck, ToleranceAcceptsTheRoundedReference, ()) {
  const Checked c = prepare(small_attention(1 << 30));
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             c.reference.out_storage(c.problem.dtype));
  RC_ASSERT(cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, ToleranceAcceptsAFloat32SplitKKernel, ()) {
  const Checked c = prepare(small_attention(1 << 30));
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             simulate("sim_split_k_fp32", c.problem));
  RC_CLASSIFY(cmp.max_ratio > 0.25, "uses over a quarter of the tolerance");
  RC_ASSERT(cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, EngineModelAcceptsStorageDtypeIntermediates, ()) {
  const gen::AttentionSpec spec = small_attention(1 << 30);
  const ref::PagedAttentionProblem p = gen::materialize(spec);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  // The model its declaration names (weights, products and partition outputs rounded).
  verify::ToleranceModel engine;
  engine.precision = verify::from_abi(sim_caps("sim_split_k_lowp").precision);
  RC_ASSERT(!engine.precision.is_strict());
  const auto tol = verify::attention_tolerance(p, r, engine, 1);
  const auto cmp = verify::compare_attention(p, r, tol, simulate("sim_split_k_lowp", p));
  RC_ASSERT(cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, ToleranceRejectsContextOffByOne, ()) {
  const gen::AttentionSpec spec = small_attention(8);
  // Peaked attention can put all the weight on other tokens, so that dropping the last one
  // changes nothing measurable; flat and mixed weights never do on short contexts.
  RC_PRE(spec.regime != gen::Regime::kPeaked);
  RC_PRE(spec.regime != gen::Regime::kExtreme);  // whole blocks of weight 0 (exp(-1e4))
  const Checked c = prepare(spec);
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             simulate("sim_context_off_by_one", c.problem));
  RC_LOG() << cmp.describe();
  RC_ASSERT(!cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, ToleranceRejectsScaleAppliedTwice, ()) {
  const gen::AttentionSpec spec = small_attention(64);
  bool some_context = false;
  for (int32_t len : spec.context_lens) some_context = some_context || len >= 2;
  RC_PRE(some_context);  // one token: the output is v whatever the scale
  // Extreme logits: one token of the top level may hold all the weight at either scale.
  RC_PRE(spec.regime != gen::Regime::kExtreme);
  const Checked c = prepare(spec);
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             simulate("sim_scale_twice", c.problem));
  RC_ASSERT(!cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, ToleranceRejectsWrongKvHeadUnderGqa, ()) {
  const gen::AttentionSpec spec = small_attention(1 << 30);
  RC_PRE(spec.num_kv_heads > 1 && spec.num_kv_heads < spec.num_heads);  // GQA only
  RC_PRE(spec.regime != gen::Regime::kExtreme);  // another head's keys may pick the same token
  const Checked c = prepare(spec);
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             simulate("sim_wrong_kv_head", c.problem));
  RC_ASSERT(!cmp.passed());
}

RC_GTEST_PROP(VerifyCheck, ToleranceRejectsPartitionMaxOnlyOnPeakedLongContexts, ()) {
  const auto caps = test::decode_caps(PC_FAMILY_PAGED_ATTENTION);
  const auto spec = *rc::gen::suchThat(
      rc::gen::resize(60, gen::attention_spec(caps)), [](const gen::AttentionSpec& s) {
        bool long_context = false;
        for (int32_t len : s.context_lens) long_context = long_context || len > 600;
        return s.regime == gen::Regime::kPeaked && long_context && s.num_seqs * s.num_heads <= 12;
      });
  const Checked c = prepare(spec);
  const auto cmp = verify::compare_attention(c.problem, c.reference, c.tolerance,
                                             simulate("sim_partition_max_only", c.problem));
  RC_LOG() << cmp.describe();
  RC_ASSERT(!cmp.passed());
}

TEST(VerifyCheck, UlpAndUnitRoundoff) {
  EXPECT_EQ(verify::unit_roundoff(DType::kFloat16), std::ldexp(1.0, -11));
  EXPECT_EQ(verify::ulp(DType::kFloat16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(verify::ulp(DType::kFloat16, 1.5), std::ldexp(1.0, -10));
  EXPECT_EQ(verify::ulp(DType::kFloat16, 0.0), std::ldexp(1.0, -24));
  EXPECT_EQ(verify::ulp(DType::kBFloat16, 2.0), std::ldexp(1.0, -6));
  EXPECT_EQ(verify::ulp(DType::kFloat32, 1.0), std::ldexp(1.0, -23));
}

RC_GTEST_PROP(VerifyCheck, CopyComparisonFlagsOneFlippedBit, ()) {
  const pc_family family =
      *rc::gen::element(PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE);
  const auto spec = std::get<gen::CopySpec>(*test::small_case(family));
  const bool gather = family == PC_FAMILY_GATHER_CACHED_KV;
  const ref::CacheCopyProblem input = gen::materialize(spec);
  ref::CacheCopyProblem expected = input;
  if (gather) {
    ref::gather_cached_kv(expected);
  } else {
    ref::reshape_and_cache(expected);
  }
  std::vector<std::byte> first = gather ? expected.key : expected.key_cache;
  std::vector<std::byte> second = gather ? expected.value : expected.value_cache;
  RC_ASSERT(check::compare_copy(expected, gather, first, second).passed());
  // Flip one bit anywhere in either buffer (padding and untouched rows included).
  const bool in_first = *rc::gen::arbitrary<bool>();
  std::vector<std::byte>& target = in_first ? first : second;
  const std::size_t byte = *rc::gen::inRange<std::size_t>(0, target.size());
  const int bit = *rc::gen::inRange(0, 8);
  target[byte] ^= static_cast<std::byte>(1u << bit);
  const auto cmp = check::compare_copy(expected, gather, first, second);
  RC_ASSERT(cmp.mismatches == 1);
  RC_ASSERT(!cmp.first.empty());
}

TEST(VerifyCheck, CopyComparisonNamesTheElement) {
  gen::CopySpec spec;
  spec.family = PC_FAMILY_GATHER_CACHED_KV;
  spec.num_kv_heads = 2;
  spec.num_blocks = 2;
  spec.slot_mapping = {3, -1, 17};
  const ref::CacheCopyProblem input = gen::materialize(spec);
  ref::CacheCopyProblem expected = input;
  ref::gather_cached_kv(expected);
  std::vector<std::byte> key = expected.key;
  // Row 1 (slot -1) must stay untouched: write a zero there.
  const int64_t off = expected.key_layout.offset(1, 1, 5) * 2;
  key[off] = std::byte{0};
  key[off + 1] = std::byte{0};
  const auto cmp = check::compare_copy(expected, true, key, expected.value);
  EXPECT_EQ(cmp.mismatches, 1);
  EXPECT_NE(cmp.first.find("token 1, head 1, dim 5"), std::string::npos) << cmp.first;
  EXPECT_NE(cmp.first.find("0x0000"), std::string::npos) << cmp.first;
}

RC_GTEST_PROP(VerifyCheck, CachePositionsNameEveryElementOfEveryLayout, ()) {
  const pc_family family = *rc::gen::element(PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV);
  const gen::CaseSpec spec = *test::small_case(family);
  const ref::PagedCacheLayout c =
      std::visit([](const auto& s) { return gen::cache_layout(s); }, spec);
  RC_TAG(ref::cache_kind_name(c.kind), c.combined ? "combined" : "separate");
  for (int i = 0; i < 20; ++i) {
    const int64_t b = *rc::gen::inRange<int64_t>(0, c.num_blocks);
    const int64_t h = *rc::gen::inRange<int64_t>(0, c.num_kv_heads);
    const int64_t slot = *rc::gen::inRange<int64_t>(0, c.block_size);
    const int64_t d = *rc::gen::inRange<int64_t>(0, c.head_size);
    const std::string where = "block " + std::to_string(b) + ", head " + std::to_string(h) +
                              ", slot " + std::to_string(slot) + ", dim " + std::to_string(d);
    RC_ASSERT(check::cache_position(c, true, c.key_at(b, h, slot, d)) == where);
    const std::string value = check::cache_position(c, c.combined, c.value_at(b, h, slot, d));
    const std::string expected = c.combined ? "value " + where : where;
    RC_ASSERT(value == expected);
  }
  if (c.key_span() > 0 && !c.packed()) {
    // Some padding exists; the position of a padding element says so.
    std::vector<bool> used(static_cast<std::size_t>(c.key_span()));
    for (int64_t b = 0; b < c.num_blocks; ++b)
      for (int64_t h = 0; h < c.num_kv_heads; ++h)
        for (int64_t slot = 0; slot < c.block_size; ++slot)
          for (int64_t d = 0; d < c.head_size; ++d) {
            used[c.key_at(b, h, slot, d)] = true;
            if (c.combined) used[c.value_at(b, h, slot, d)] = true;
          }
    const auto gap = std::find(used.begin(), used.end(), false);
    if (gap != used.end()) {
      RC_ASSERT(check::cache_position(c, true, gap - used.begin()) == "padding");
    }
  }
}

/// A decode batch of two sequences, the second a padding row (context 0).
gen::AttentionSpec padded_batch() {
  gen::AttentionSpec s;
  s.num_seqs = 2;
  s.num_heads = 2;
  s.context_lens = {5, 0};
  s.block_table = {0, -1};
  s.num_blocks = 2;
  return s;
}

TEST(VerifyCheck, ContextZeroRowsAreJudgedByTheDeclaration) {
  const ref::PagedAttentionProblem p = gen::materialize(padded_batch());
  ASSERT_TRUE(check::has_context0_rows(p));
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  // sim_reference declares the rows untouched: they keep the output poison.
  std::vector<std::byte> out = simulate("sim_reference", p);
  EXPECT_TRUE(check::compare_context0_rows(p, PC_CONTEXT0_UNTOUCHED, out).passed());
  const check::CopyComparison as_zeros = check::compare_context0_rows(p, PC_CONTEXT0_ZEROS, out);
  EXPECT_EQ(as_zeros.mismatches, p.num_heads * p.head_size()) << as_zeros.describe();
  EXPECT_NE(as_zeros.first.find("context-0 row 1, head 0, dim 0: declared zeros"),
            std::string::npos)
      << as_zeros.first;
  // The same rows as +0: right for a variant declaring zeros, wrong for one declaring them
  // untouched; -0 is not +0.
  const std::size_t row = static_cast<std::size_t>(p.num_heads * p.head_size()) * 2;
  std::fill(out.begin() + row, out.end(), std::byte{0});
  EXPECT_TRUE(check::compare_context0_rows(p, PC_CONTEXT0_ZEROS, out).passed());
  EXPECT_FALSE(check::compare_context0_rows(p, PC_CONTEXT0_UNTOUCHED, out).passed());
  out[row + 1] = std::byte{0x80};
  EXPECT_EQ(check::compare_context0_rows(p, PC_CONTEXT0_ZEROS, out).mismatches, 1);
  // The other rows are compared with the reference whatever the padding row holds.
  const std::vector<std::byte> masked = check::with_reference_context0_rows(p, r, out);
  EXPECT_TRUE(std::equal(masked.begin() + row, masked.end(), r.out_storage(p.dtype).begin() + row));
  EXPECT_TRUE(std::equal(masked.begin(), masked.begin() + row, out.begin()));
}

TEST(VerifyCheck, ACaseWithAPaddingRowPassesOrFailsByTheDeclaration) {
  const std::unique_ptr<check::CaseBackend> backend = check::make_sim_backend();
  check::CaseRequest request;
  request.registry = "sim";
  request.spec = padded_batch();
  request.ref_threads = 1;
  request.variant = "sim_reference";  // untouched, as declared
  const check::CaseResult good = check::run_case({backend.get()}, request);
  EXPECT_EQ(good.outcome, check::Outcome::kPassed) << good.summary();
  EXPECT_TRUE(good.comparison.contains("context0")) << good.comparison.dump();
  request.variant = "sim_context0_nan";  // declares zeros, writes NaN
  const check::CaseResult bad = check::run_case({backend.get()}, request);
  EXPECT_EQ(bad.outcome, check::Outcome::kIncorrect) << bad.summary();
  EXPECT_NE(bad.message.find("context-0 rows: "), std::string::npos) << bad.message;
}

}  // namespace
}  // namespace pagecheck::verify
