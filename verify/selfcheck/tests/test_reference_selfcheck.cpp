/// The seeded self-check behind `pagecheck verify`: it passes, covers every family and dtype,
/// is reproducible from its seed, and rejects a non-positive case count.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pagecheck/verify/reference_selfcheck.h"

namespace pagecheck {
namespace {

TEST(ReferenceSelfcheck, DefaultRunPassesAndCoversEverything) {
  const verify::SelfcheckReport report = verify::run_reference_selfcheck(1, 64);
  ASSERT_EQ(report.cases.size(), 64u);
  std::set<std::string> families, dtypes, seen;
  // Words of the case names (AttentionSpec / CopySpec::describe) every run must contain.
  const std::vector<std::string> features = {
      "alibi",      "/1 ctx",      " nhd",      " hnd",       "kv fp8_e4m3", "kv fp8_e5m2",
      "per_tensor", "per_kv_head", "combined",  "dequantize", " q [",        "sinks",
      "window",     "cap",         "noncausal", ",0",         "shared",      "pad"};
  for (const auto& c : report.cases) {
    EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
    EXPECT_FALSE(c.detail.empty()) << c.name;
    EXPECT_GE(c.seconds, 0.0);
    families.insert(c.family);
    for (const char* dtype : {"float32", "float16", "bfloat16"}) {
      if (c.name.find(dtype + std::string(" h")) != std::string::npos) {
        dtypes.insert(c.family + "/" + dtype);
      }
    }
    for (const std::string& f : features) {
      if (c.name.find(f) != std::string::npos) seen.insert(f);
    }
  }
  EXPECT_TRUE(report.all_passed());
  EXPECT_EQ(families.size(), 3u);
  EXPECT_EQ(dtypes.size(), 9u);  // every family with every dtype
  for (const std::string& f : features) EXPECT_TRUE(seen.count(f)) << "no case has \"" << f << "\"";
}

TEST(ReferenceSelfcheck, SameSeedSameCases) {
  const verify::SelfcheckReport a = verify::run_reference_selfcheck(7, 9);
  const verify::SelfcheckReport b = verify::run_reference_selfcheck(7, 9);
  const verify::SelfcheckReport c = verify::run_reference_selfcheck(8, 9);
  ASSERT_EQ(a.cases.size(), b.cases.size());
  bool any_different = false;
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    EXPECT_EQ(a.cases[i].name, b.cases[i].name);
    EXPECT_EQ(a.cases[i].detail, b.cases[i].detail);
    any_different |= a.cases[i].name != c.cases[i].name;
  }
  EXPECT_TRUE(any_different) << "seeds 7 and 8 drew the same cases";
}

TEST(ReferenceSelfcheck, EmptyReportIsNotAPass) {
  EXPECT_FALSE(verify::SelfcheckReport{}.all_passed());
  EXPECT_THROW(verify::run_reference_selfcheck(1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck
