/// The full-range content regime (issue 13, PC_CAP_FULL_RANGE): a default run (200 cases,
/// seed 1) of a variant that declares the flag draws several full-range cases per family and
/// one that does not declares none; their inputs are finite and reach the dtype's largest
/// finite value (copies: exactly +-max, fp8 quotients beyond the saturation edge; attention: V
/// near the KV dtype's maximum), and the attention tolerance stays finite and relative to the
/// values' magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/gen/variant_caps.h"
#include "pagecheck/verify/tolerance.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

constexpr pc_family kFamilies[] = {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV,
                                   PC_FAMILY_RESHAPE_AND_CACHE};

/// The default run's cases of `caps` in the full-range regime (large cases left out).
std::vector<gen::CaseSpec> full_range_cases(const gen::VariantCaps& caps) {
  std::vector<gen::CaseSpec> out;
  for (const auto& spec : test::default_run(caps, test::LargeCases::kSkip)) {
    const gen::Regime r = std::visit([](const auto& s) { return s.regime; }, spec);
    if (r == gen::Regime::kFullRange) out.push_back(spec);
  }
  return out;
}

/// The scale of kv head `h` (one per tensor or one per head; 1 without scales).
double scale_of(const std::vector<float>& scales, int64_t h) {
  if (scales.empty()) return 1.0;
  return scales.size() == 1 ? scales[0] : scales[h];
}

TEST(VerifyGenFullRange, DrawnSeveralTimesPerFamilyOnlyWhereDeclared) {
  for (pc_family family : kFamilies) {
    gen::VariantCaps declaring = test::full_caps(family);
    ASSERT_TRUE(declaring.has(PC_CAP_FULL_RANGE));
    const std::map<std::string, int> tags =
        test::tag_histogram(test::default_run(declaring), declaring);
    const auto it = tags.find("full_range");
    EXPECT_GE(it == tags.end() ? 0 : it->second, 8) << family_name(family);
    const std::vector<std::string> reachable = gen::all_edge_tags(declaring);
    EXPECT_NE(std::find(reachable.begin(), reachable.end(), "full_range"), reachable.end());

    gen::VariantCaps plain = declaring;
    plain.caps &= ~uint64_t{PC_CAP_FULL_RANGE};
    for (const auto& spec : test::default_run(plain)) {
      const gen::Regime r = std::visit([](const auto& s) { return s.regime; }, spec);
      ASSERT_NE(r, gen::Regime::kFullRange) << gen::describe(spec);
      const std::vector<std::string> t = gen::edge_tags(spec, plain);
      ASSERT_EQ(std::find(t.begin(), t.end(), "full_range"), t.end());
    }
    const std::vector<std::string> unreachable = gen::all_edge_tags(plain);
    EXPECT_EQ(std::find(unreachable.begin(), unreachable.end(), "full_range"), unreachable.end());
  }
}

TEST(VerifyGenFullRange, NameParsesAndPrints) {
  EXPECT_STREQ(gen::regime_name(gen::Regime::kFullRange), "full_range");
  EXPECT_EQ(gen::parse_regime("full_range"), gen::Regime::kFullRange);
  EXPECT_EQ(gen::cap_names(PC_CAP_FULL_RANGE), std::vector<std::string>{"full_range"});
  const auto specs = full_range_cases(test::full_caps(PC_FAMILY_RESHAPE_AND_CACHE));
  ASSERT_FALSE(specs.empty());
  const nlohmann::json j = gen::spec_to_json(specs[0]);
  EXPECT_EQ(j.at("regime"), "full_range");
  EXPECT_EQ(gen::spec_to_json(gen::spec_from_json(j)), j);
}

/// Counts over the elements a copy reads: at +-max of their dtype, beyond the fp8 edge.
struct CopyCounts {
  int64_t at_max = 0;     ///< 16/32-bit elements or fp8 codes at exactly +-max
  int64_t beyond = 0;     ///< reshape into fp8: |value / scale| above the largest code
  int64_t top_token = 0;  ///< reshape into fp8: tokens at exactly +-max of the token dtype
  int64_t saturated = 0;  ///< reshape into fp8: written codes at +-max
};

/// Every key and value element the cache holds at the spec's written slots (slot >= 0), read
/// in the cache's own dtype: what a gather reads and what a reshape wrote.
std::vector<double> cached_elements(const gen::CopySpec& s, const ref::CacheCopyProblem& p) {
  const DType kv = p.cache.dtype;
  const int64_t bs = s.block_size;
  const std::vector<std::byte>& values = p.cache.combined ? p.key_cache : p.value_cache;
  std::vector<double> out;
  for (int64_t slot : s.slot_mapping) {
    if (slot < 0) continue;
    for (int64_t h = 0; h < s.num_kv_heads; ++h) {
      for (int64_t d = 0; d < s.head_size; ++d) {
        out.push_back(
            load_element(kv, p.key_cache.data(), p.cache.key_at(slot / bs, h, slot % bs, d)));
        out.push_back(
            load_element(kv, values.data(), p.cache.value_at(slot / bs, h, slot % bs, d)));
      }
    }
  }
  return out;
}

/// Checks one copy case's read elements (finite) and adds to the counts.
void count_copy(const gen::CopySpec& s, CopyCounts& n) {
  ref::CacheCopyProblem p = gen::materialize(s);
  const DType kv = p.cache.dtype;
  const double kv_max = dtype_info(kv).max_finite, token_max = dtype_info(s.dtype).max_finite;
  if (s.family == PC_FAMILY_GATHER_CACHED_KV) {
    for (double v : cached_elements(s, p)) {
      ASSERT_TRUE(std::isfinite(v)) << gen::describe(s);
      n.at_max += std::fabs(v) == kv_max;
    }
    return;
  }
  const bool quantized = kv != s.dtype;
  const int64_t tokens = static_cast<int64_t>(s.slot_mapping.size());
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < s.num_kv_heads; ++h) {
      for (int64_t d = 0; d < s.head_size; ++d) {
        const double k = load_element(s.dtype, p.key.data(), p.key_layout.offset(t, h, d));
        const double v = load_element(s.dtype, p.value.data(), p.value_layout.offset(t, h, d));
        ASSERT_TRUE(std::isfinite(k) && std::isfinite(v)) << gen::describe(s);
        if (!quantized) {
          n.at_max += (std::fabs(k) == token_max) + (std::fabs(v) == token_max);
          continue;
        }
        n.top_token += (std::fabs(k) == token_max) + (std::fabs(v) == token_max);
        n.beyond += (std::fabs(k) / scale_of(s.cache.k_scale, h) > kv_max) +
                    (std::fabs(v) / scale_of(s.cache.v_scale, h) > kv_max);
      }
    }
  }
  if (!quantized) return;
  // The reference saturates: every written code is finite, some at the largest one.
  ref::reshape_and_cache(p);
  for (double c : cached_elements(s, p)) {
    ASSERT_TRUE(std::isfinite(c)) << gen::describe(s);
    n.saturated += std::fabs(c) == kv_max;
  }
}

TEST(VerifyGenFullRange, CopyInputsAreFiniteAndReachTheLargestFiniteValue) {
  for (pc_family family : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    CopyCounts n;
    int raw = 0, fp8 = 0;
    for (const auto& spec : full_range_cases(test::full_caps(family))) {
      const auto& s = std::get<gen::CopySpec>(spec);
      const bool quantized = s.cache.kv_dtype != s.dtype;
      raw += !quantized && !dtype_info(s.cache.kv_dtype).fp8;
      fp8 += dtype_info(s.cache.kv_dtype).fp8;
      count_copy(s, n);
      if (HasFatalFailure()) return;
    }
    const char* name = family_name(family);
    EXPECT_GT(raw, 0) << name;
    EXPECT_GT(fp8, 0) << name;
    EXPECT_GT(n.at_max, 0) << name << ": no element at exactly +-max";
    if (family == PC_FAMILY_RESHAPE_AND_CACHE) {
      EXPECT_GT(n.beyond, 0) << "no quotient beyond the fp8 saturation edge";
      EXPECT_GT(n.top_token, 0) << "no token at the token dtype's largest finite value";
      EXPECT_GT(n.saturated, 0) << "no saturated code written";
    }
  }
}

/// One attention case: V finite and near the KV dtype's largest value; the reference output
/// finite and representable; the logits within the extreme regime's bound; the tolerance
/// finite, relative to |V|, and met by the rounded reference. Returns the largest |V| /
/// the KV dtype's largest finite value (fp8: in codes), or -1 when no V is read.
double check_attention(const gen::AttentionSpec& s) {
  const ref::PagedAttentionProblem p = gen::materialize(s);
  const DType kv = p.cache.dtype;
  const std::vector<bool> readable = gen::readable_slots(s);
  double top = 0, magnitude = 0;  // largest |code| and largest |V| (scale applied)
  const std::vector<std::byte>& values = p.cache.combined ? p.key_cache : p.value_cache;
  for (int64_t b = 0; b < p.cache.num_blocks; ++b) {
    for (int64_t slot = 0; slot < p.block_size(); ++slot) {
      if (!readable[b * p.block_size() + slot]) continue;
      for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
        for (int64_t d = 0; d < p.head_size(); ++d) {
          const double v = load_element(kv, values.data(), p.cache.value_at(b, h, slot, d));
          EXPECT_TRUE(std::isfinite(v)) << gen::describe(s);
          top = std::max(top, std::fabs(v));
          magnitude = std::max(magnitude, std::fabs(v) * scale_of(p.v_scale, h));
        }
      }
    }
  }
  if (magnitude == 0) return -1;  // every context 0: no V is read
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  const std::vector<double> tol = attention_tolerance(p, r, {}, 1);
  const double out_max = dtype_info(p.dtype).max_finite;
  for (std::size_t i = 0; i < tol.size(); ++i) {
    EXPECT_TRUE(std::isfinite(r.out[i]) && std::fabs(r.out[i]) <= out_max) << gen::describe(s);
    // Relative to the values (bfloat16's own rounding is 2^-9 of them): an output off by a
    // hundredth of |V| is told apart.
    EXPECT_TRUE(std::isfinite(tol[i]) && tol[i] <= 1e-2 * magnitude)
        << tol[i] << " vs |V| " << magnitude << gen::describe(s);
    if (::testing::Test::HasFailure()) return 0;
  }
  for (double lse : r.lse) {
    if (std::isfinite(lse)) {
      EXPECT_LT(std::fabs(lse), 1.0e4) << gen::describe(s);
    }
  }
  const auto cmp = compare_attention(p, r, tol, r.out_storage(p.dtype));
  EXPECT_TRUE(cmp.passed()) << cmp.describe() << gen::describe(s);
  // An output off by 5% of |V| in one element fails.
  std::vector<double> off = r.out;
  off[0] += (off[0] > 0 ? -5e-2 : 5e-2) * magnitude;
  ref::PagedAttentionResult wrong = r;
  wrong.out = off;
  EXPECT_FALSE(compare_attention(p, r, tol, wrong.out_storage(p.dtype)).passed())
      << gen::describe(s);
  return top / dtype_info(kv).max_finite;
}

TEST(VerifyGenFullRange, AttentionValuesNearTheMaximumKeepOutputAndToleranceFinite) {
  int cases = 0, near = 0, fp8_at_max = 0;
  for (const auto& spec : full_range_cases(test::full_caps(PC_FAMILY_PAGED_ATTENTION))) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    if (s.num_heads * gen::largest_context(s) > 8192) continue;  // CPU time
    const double top = check_attention(s);
    if (HasFailure()) return;
    if (top < 0) continue;
    ++cases;
    near += top >= 0.9;
    fp8_at_max += dtype_info(s.cache.kv_dtype).fp8 && top == 1.0;
  }
  EXPECT_GE(cases, 8);
  EXPECT_GE(near, cases * 3 / 4) << "V rarely reaches the upper tenth below the maximum";
  EXPECT_GT(fp8_at_max, 0) << "no fp8 V code at the largest finite value";
}

}  // namespace
}  // namespace pagecheck::verify
