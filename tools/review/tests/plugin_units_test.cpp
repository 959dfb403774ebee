/// Evidence units for variants that live outside pagecheck (a plugin's): kernels/families.json
/// entries with "family" and "variants", the reports recorded for them, and the review that
/// asks for their evidence exactly as for built-in families.
#include <gtest/gtest.h>

#include "pagecheck/review/record.h"
#include "pagecheck/review/review.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

/// A scratch repository with a plugin unit "my_gather" (family gather_cached_kv, variant
/// "p") beside the built-in families.
void add_plugin_unit(const ScratchRepo& repo) {
  repo.write("kernels/families.json", R"({
  "schema": "pagecheck.families/1",
  "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu", "kernels/include/*.h"]},
    {"name": "paged_attention", "sources": ["kernels/src/attention/*", "kernels/include/*.h"]},
    {"name": "reshape_and_cache", "sources": ["kernels/src/reshape/*", "kernels/include/*.h"]},
    {"name": "my_gather", "family": "gather_cached_kv", "variants": ["p"],
     "sources": ["plugin/*.cu", "kernels/include/*.h"]}
  ]
})");
  repo.write("plugin/my_gather.cu", "__global__ void my_gather() {}\n");
}

VerificationRecord plugin_record(const ScratchRepo& repo, const std::vector<std::string>& names) {
  VerificationRecord r = testing::test_record("gather_cached_kv", repo.hash("my_gather"));
  r.unit = "my_gather";
  const int64_t cases = kDefaultCasesPerVariant;
  for (const auto& n : names) r.variants.push_back(testing::entry(n, cases, 7, cases, 0, 0));
  return r;
}

/// A gather run with built-in "a" and plugin "p", recorded per unit as `bench --record` does.
void record_plugin_bandwidth(const ScratchRepo& repo, const std::vector<std::string>& variants) {
  std::vector<std::vector<bench::testing::Timing>> t(variants.size(), {{10, 0.01}, {20, 0.01}});
  const bench::BenchReport run =
      bench::testing::make_report("gather_cached_kv", "unknown", variants, t);
  for (const auto& r : reports_per_unit(repo.root(), run, {"a"})) {
    const std::string path = bandwidth_report_path(repo.root(), r.unit_name(), r.source_hash);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    bench::write_report(r, path);
  }
}

std::string all_problems(const ReviewResult& r) {
  std::string s;
  for (const auto& f : r.families) {
    for (const auto& p : f.problems) s += f.family + ": " + p + "\n";
  }
  return s;
}

const FamilyReview& unit_review(const ReviewResult& r, const std::string& name) {
  for (const auto& f : r.families) {
    if (f.family == name) return f;
  }
  throw std::runtime_error("no unit " + name);
}

ReviewResult review(const ScratchRepo& repo) {
  ReviewOptions o;
  o.repo = repo.root();
  return run_review(o);
}

TEST(PluginUnits, ParsedWithFamilyAndVariants) {
  const auto units = parse_family_sources(R"({"schema": "pagecheck.families/1", "families": [
    {"name": "gather_cached_kv", "sources": ["k/*"]},
    {"name": "mine", "family": "gather_cached_kv", "variants": ["p", "q"], "sources": ["m/*"]}]})",
                                          "f.json");
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].kernel_family(), "gather_cached_kv");
  EXPECT_TRUE(units[0].variants.empty());
  EXPECT_EQ(units[1].kernel_family(), "gather_cached_kv");
  EXPECT_EQ(units[1].variants, (std::vector<std::string>{"p", "q"}));
  // Built-in variants go to the unit without a list; named variants to the unit naming them,
  // wherever they were registered; a plugin variant nobody names goes nowhere.
  EXPECT_EQ(evidence_unit_for(units, "gather_cached_kv", "vectorized", true), &units[0]);
  EXPECT_EQ(evidence_unit_for(units, "gather_cached_kv", "p", false), &units[1]);
  EXPECT_EQ(evidence_unit_for(units, "gather_cached_kv", "q", true), &units[1]);
  EXPECT_EQ(evidence_unit_for(units, "gather_cached_kv", "other", false), nullptr);
  EXPECT_EQ(evidence_unit_for(units, "paged_attention", "p", false), nullptr);
  EXPECT_EQ(evidence_unit_for(units, "paged_attention", "v1", true), nullptr);
}

TEST(PluginUnits, AmbiguousOrMalformedEntriesAreRejectedNamingTheEntry) {
  const auto rejects = [](const std::string& families, const std::string& fragment) {
    try {
      parse_family_sources(R"({"schema": "pagecheck.families/1", "families": [)" + families + "]}",
                           "f.json");
      ADD_FAILURE() << "accepted: " << families;
    } catch (const EvidenceError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // Two units claiming the built-in variants of one family.
  rejects(R"({"name": "gather_cached_kv", "sources": ["a"]},
             {"name": "b", "family": "gather_cached_kv", "sources": ["b"]})",
          "families[1]");
  // One variant in two units.
  rejects(R"({"name": "a", "family": "f", "variants": ["p"], "sources": ["a"]},
             {"name": "b", "family": "f", "variants": ["q", "p"], "sources": ["b"]})",
          "'p' is already held by 'a'");
  rejects(R"({"name": "a", "family": "f", "variants": [], "sources": ["a"]})", "'variants'");
  rejects(R"({"name": "a", "family": "f", "variants": ["p", "p"], "sources": ["a"]})",
          "listed twice");
  rejects(R"({"name": "a", "family": "", "sources": ["a"]})", "'family'");
  rejects(R"({"name": "a/b", "family": "f", "variants": ["p"], "sources": ["a"]})", "'name'");
}

TEST(PluginUnits, RunIsSplitIntoOneReportPerUnit) {
  ScratchRepo repo;
  add_plugin_unit(repo);
  const bench::BenchReport run =
      bench::testing::make_sweep_report("gather_cached_kv", "unknown", {"a", "p", "b"});
  const auto reports = reports_per_unit(repo.root(), run, {"a", "b"});
  ASSERT_EQ(reports.size(), 2u);
  // The built-in unit keeps only built-in variants, under the family's hash.
  EXPECT_EQ(reports[0].unit_name(), "gather_cached_kv");
  EXPECT_EQ(reports[0].variants, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reports[0].source_hash, repo.hash("gather_cached_kv"));
  ASSERT_EQ(reports[0].shapes.front().variants.size(), 2u);
  // The plugin unit keeps its variant and the built-in ones measured beside it.
  EXPECT_EQ(reports[1].unit_name(), "my_gather");
  EXPECT_EQ(reports[1].family, "gather_cached_kv");
  EXPECT_EQ(reports[1].variants, (std::vector<std::string>{"a", "p", "b"}));
  EXPECT_EQ(reports[1].source_hash, repo.hash("my_gather"));
  EXPECT_NE(reports[1].source_hash, reports[0].source_hash);
  // The unit survives the JSON round trip, and a recorded report must match its unit.
  const bench::BenchReport back = bench::report_from_json(bench::to_json(reports[1]), "rt");
  EXPECT_EQ(back.unit_name(), "my_gather");
  EXPECT_NO_THROW(check_recordable(
      repo.root(),
      [&] {
        auto r = reports[1];
        r.sweep = "default";
        return r;
      }(),
      "carried.json"));

  // A plugin variant that no unit holds cannot be recorded.
  const bench::BenchReport stray =
      bench::testing::make_report("gather_cached_kv", "unknown", {"a", "z"}, {{{1, 0}}, {{1, 0}}});
  try {
    reports_per_unit(repo.root(), stray, {"a"});
    FAIL() << "stray plugin variant recorded";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("kernels/families.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gather_cached_kv/z"), std::string::npos) << e.what();
  }
}

TEST(PluginUnits, ReviewAsksForThePluginsEvidenceLikeABuiltInFamilys) {
  ScratchRepo repo;
  add_plugin_unit(repo);
  repo.record_all({10, 20});
  repo.commit("plugin without evidence");
  ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 1);
  const FamilyReview& missing = unit_review(r, "my_gather");
  EXPECT_EQ(missing.kernel_family, "gather_cached_kv");
  EXPECT_FALSE(missing.verification_present);
  EXPECT_EQ(missing.verification_path,
            "fixtures/verification/my_gather-" + short_hash(repo.hash("my_gather")) + ".json");
  EXPECT_EQ(missing.problems.size(), 2u) << all_problems(r);

  write_verification_record(repo.root(), plugin_record(repo, {"p"}));
  record_plugin_bandwidth(repo, {"a", "p"});
  r = review(repo);
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  EXPECT_TRUE(unit_review(r, "my_gather").verification_passed);
  EXPECT_NE(render_review_markdown(r).find("`my_gather` (gather_cached_kv: `p`)"),
            std::string::npos)
      << render_review_markdown(r);

  // Editing the plugin's kernel invalidates only the plugin's evidence.
  repo.write("plugin/my_gather.cu", "__global__ void my_gather() { /* faster */ }\n");
  r = review(repo);
  EXPECT_EQ(unit_review(r, "my_gather").problems.size(), 2u) << all_problems(r);
  EXPECT_TRUE(unit_review(r, "gather_cached_kv").problems.empty()) << all_problems(r);
}

TEST(PluginUnits, EvidenceWithoutTheDeclaredVariantFails) {
  ScratchRepo repo;
  add_plugin_unit(repo);
  repo.record_all({10, 20});
  // Records for the unit's hash, but for other variants than the one it declares.
  write_verification_record(repo.root(), plugin_record(repo, {"other"}));
  std::vector<std::vector<bench::testing::Timing>> t(1, {{10, 0.01}});
  bench::BenchReport only_builtin =
      bench::testing::make_report("gather_cached_kv", repo.hash("my_gather"), {"a"}, t);
  only_builtin.unit = "my_gather";
  const std::string path = bandwidth_report_path(repo.root(), "my_gather", repo.hash("my_gather"));
  bench::write_report(only_builtin, path);
  const ReviewResult r = review(repo);
  const std::string problems = all_problems(r);
  EXPECT_NE(problems.find("has no result for p"), std::string::npos) << problems;
  EXPECT_NE(problems.find("has no rows for p"), std::string::npos) << problems;
}

TEST(PluginUnits, RecordFiledUnderAnotherUnitIsBadInput) {
  ScratchRepo repo;
  add_plugin_unit(repo);
  repo.record_all({10, 20});
  record_plugin_bandwidth(repo, {"a", "p"});
  // The plugin's record, renamed onto the built-in family's name: the review refuses it.
  const std::string written = write_verification_record(repo.root(), plugin_record(repo, {"p"}));
  const std::string builtin_path =
      verification_record_path(repo.root(), "gather_cached_kv", repo.hash("gather_cached_kv"));
  std::filesystem::copy_file(written, builtin_path,
                             std::filesystem::copy_options::overwrite_existing);
  try {
    review(repo);
    FAIL() << "a record of another unit was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find(builtin_path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagecheck::review
