/// The verification engine on CPU simulations: correct variants pass, every simulated bug is
/// caught and shrunk, reproduce strings and artefacts replay, shards cover the run and merge,
/// and a worker process that crashes or hangs becomes a failing case, not a dead harness.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/verifier.h"

namespace pagecheck::verify {
namespace {

namespace fs = std::filesystem;

class Engine : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = check::make_sim_backend(/*allow_crash=*/true);  // crash/hang only via workers
    dir_ = fs::temp_directory_path() /
           ("pagecheck_engine_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  check::Target target(const std::string& name) const {
    for (const auto& v : backend_->variants()) {
      if (v.caps.name == name) return check::Target{v.registry, v.caps};
    }
    throw std::logic_error("no sim variant " + name);
  }

  check::ExecutorFactory inline_factory() {
    return [this](int) {
      return std::make_unique<check::InlineExecutor>(
          std::vector<check::CaseBackend*>{backend_.get()});
    };
  }

  check::VerifyOptions options(int cases) const {
    check::VerifyOptions o;
    o.cases = cases;
    o.seed = 11;
    o.ref_threads = 1;
    o.artifact_dir = dir_.string();
    o.shrink_budget_s = 60;
    return o;
  }

  std::unique_ptr<check::CaseBackend> backend_;
  fs::path dir_;
};

TEST_F(Engine, CorrectSimulationsPass) {
  std::vector<check::Target> targets;
  for (const auto& name : check::correct_sim_variants()) targets.push_back(target(name));
  const check::RunReport report = check::run_verification(targets, options(60), inline_factory());
  EXPECT_EQ(report.exit_code(), 0);
  for (const auto& v : report.variants) {
    EXPECT_EQ(v.run, 60) << v.variant;
    EXPECT_EQ(v.passed, 60) << v.variant << (v.failure ? ": " + v.failure->message : "");
    EXPECT_FALSE(v.failure.has_value()) << v.variant;
  }
}

struct BugCase {
  const char* variant;
  int max_seqs_after_shrink;  ///< the shrunk counterexample is at most this wide
};

TEST_F(Engine, EverySimulatedBugIsCaughtShrunkAndReproducible) {
  // Shrinking is greedy, so a counterexample is locally (not globally) minimal; every one of
  // these needs a single sequence and ends with one, except the two that need a second one
  // (a padded table row is another row's padding; a short sequence beside a long one).
  const BugCase bugs[] = {{"sim_context_off_by_one", 1},
                          {"sim_skip_last_partial_block", 1},
                          {"sim_zero_weight_nan", 1},
                          {"sim_scale_twice", 1},
                          {"sim_wrong_kv_head", 1},
                          {"sim_partition_max_only", 1},
                          {"sim_race_last_bit", 1},
                          {"sim_context0_nan", 1},
                          {"sim_engine_style_drop_partition", 1},
                          {"sim_table_stride_from_width", 2},
                          {"sim_finite_mask_sentinel", 1},
                          {"sim_parts_from_bound", 2},
                          {"sim_gqa_group_le8", 1},
                          {"sim_gather_one_block_per_token", 0},
                          {"sim_reshape_one_block_per_token", 0},
                          {"sim_gather_reads_slot_minus1", 0},
                          {"sim_gather_value_layout_keys", 0},
                          {"sim_reshape_writes_slot_minus1", 0},
                          {"sim_k_scale_on_v", 1},
                          {"sim_kv_scales_ignored", 1},
                          {"sim_scale_by_query_head", 1},
                          {"sim_nhd_strides_swapped", 1},
                          {"sim_sink_in_numerator", 1},
                          {"sim_window_off_by_one", 1},
                          {"sim_soft_cap_after_max", 1},
                          {"sim_causal_leak", 1},
                          {"sim_block_size_16", 1},
                          {"sim_reshape_fp8_no_saturation", 0}};
  for (const BugCase& bug : bugs) {
    SCOPED_TRACE(bug.variant);
    const check::Target t = target(bug.variant);
    const check::RunReport report = check::run_verification({t}, options(120), inline_factory());
    ASSERT_EQ(report.exit_code(), 1);
    const check::VariantReport& v = report.variants.at(0);
    ASSERT_TRUE(v.failure.has_value());
    const check::FailureInfo& f = *v.failure;
    EXPECT_TRUE(f.reproduced);
    EXPECT_FALSE(f.reproduce.empty());
    EXPECT_NE(f.spec_text.find(t.caps.name.find("gather") != std::string::npos ||
                                       t.caps.name.find("reshape") != std::string::npos
                                   ? "slot_mapping="
                                   : "block_table"),
              std::string::npos);
    const gen::CaseSpec shrunk = gen::spec_from_json(f.spec);
    if (bug.max_seqs_after_shrink > 0) {
      EXPECT_LE(std::get<gen::AttentionSpec>(shrunk).num_seqs, bug.max_seqs_after_shrink)
          << f.spec_text;
    }
    EXPECT_EQ(f.shrunk_size, gen::spec_size(shrunk));
    // The artefact replays to the same failure.
    ASSERT_FALSE(f.artifact.empty());
    check::InlineExecutor executor({backend_.get()});
    const check::CaseResult replayed = executor.replay(f.artifact, 1);
    EXPECT_TRUE(replayed.failed()) << replayed.summary();
    // So does the reproduce value (the spec JSON), to the same shrunk spec.
    const check::RunReport again = check::replay_spec(
        check::parse_reproduce_spec(f.reproduce, "reproduce"), {t}, options(1), inline_factory());
    ASSERT_EQ(again.variants.size(), 1u);
    ASSERT_TRUE(again.variants[0].failure.has_value());
    EXPECT_EQ(again.variants[0].failure->spec, f.spec);
    EXPECT_EQ(again.exit_code(), 1);
  }
}

TEST_F(Engine, SplitKBugsShrinkToTheOneLongSequence) {
  // A split-K bug needs one sequence over a partition; the shrink removes every other one,
  // wherever it stood, and shortens that one to just past a partition boundary.
  const std::vector<std::string> split_k_bugs{"sim_partition_max_only",
                                              "sim_engine_style_drop_partition"};
  for (const auto& name : check::buggy_sim_variants()) {  // no split-K bug left out
    const bool split_k =
        name.find("partition") != std::string::npos || name.find("split") != std::string::npos;
    EXPECT_EQ(split_k, std::count(split_k_bugs.begin(), split_k_bugs.end(), name) == 1) << name;
  }
  for (const auto& name : split_k_bugs) {
    const int64_t partition = target(name).caps.partition_sizes.at(0);  // as it declares
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE(name + " seed " + std::to_string(seed));
      check::VerifyOptions o = options(200);
      o.seed = seed;
      const check::RunReport report = check::run_verification({target(name)}, o, inline_factory());
      const check::VariantReport& v = report.variants.at(0);
      ASSERT_TRUE(v.failure.has_value());
      EXPECT_FALSE(v.failure->shrink_budget_hit);
      const auto shrunk = std::get<gen::AttentionSpec>(gen::spec_from_json(v.failure->spec));
      EXPECT_EQ(shrunk.num_seqs, 1) << v.failure->spec_text;
      ASSERT_EQ(shrunk.context_lens.size(), 1u);
      EXPECT_GT(shrunk.context_lens[0], partition) << v.failure->spec_text;
      EXPECT_LE(shrunk.context_lens[0], partition + 2) << v.failure->spec_text;
    }
  }
}

TEST_F(Engine, TheShrinkBudgetStopsShrinking) {
  check::VerifyOptions o = options(200);
  o.shrink_budget_s = 1e-9;  // over after the first step, the re-run of the failing case
  // The first seed whose first failure holds several sequences (the generators decide which).
  check::RunReport report;
  for (o.seed = 1; o.seed <= 16; ++o.seed) {
    report = check::run_verification({target("sim_partition_max_only")}, o, inline_factory());
    const auto& failure = report.variants.at(0).failure;
    ASSERT_TRUE(failure.has_value());
    if (std::get<gen::AttentionSpec>(gen::spec_from_json(failure->spec)).num_seqs > 1) break;
  }
  const check::FailureInfo& f = *report.variants.at(0).failure;
  EXPECT_TRUE(f.reproduced);
  EXPECT_TRUE(f.shrink_budget_hit);
  EXPECT_EQ(f.shrink_steps, 1);
  EXPECT_EQ(gen::summary(gen::spec_from_json(f.spec)), f.original_summary);  // not shrunk
  EXPECT_GT(std::get<gen::AttentionSpec>(gen::spec_from_json(f.spec)).num_seqs, 1);
}

TEST_F(Engine, ASpecReplaysOnEveryVariantOfItsFamily) {
  gen::AttentionSpec spec;
  spec.num_seqs = 1;
  spec.context_lens = {3};
  spec.block_table = {0};
  const std::vector<check::Target> targets{
      target("sim_reference"), target("sim_context_off_by_one"), target("sim_gather_reference")};
  const std::string json = gen::spec_to_json(spec).dump();
  const check::RunReport r = check::replay_spec(check::parse_reproduce_spec(json, "SPEC"), targets,
                                                options(1), inline_factory());
  ASSERT_EQ(r.variants.size(), 2u);  // the gather variant is of another family
  EXPECT_EQ(r.variants[0].passed, 1);
  ASSERT_TRUE(r.variants[1].failure.has_value());
  EXPECT_EQ(r.variants[1].failure->spec, gen::spec_to_json(spec));
  EXPECT_EQ(r.exit_code(), 1);
  // From a file, too; bad input names the argument and the problem.
  const fs::path file = dir_ / "spec.json";
  std::ofstream(file) << json;
  EXPECT_EQ(gen::spec_to_json(check::parse_reproduce_spec(file.string(), "SPEC")),
            gen::spec_to_json(spec));
  const auto message = [](const std::string& argument) {
    try {
      check::parse_reproduce_spec(argument, "SPEC");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{garbage").find("SPEC: the inline JSON is not JSON"), std::string::npos);
  EXPECT_NE(message((dir_ / "none.json").string()).find("SPEC: cannot read"), std::string::npos);
  EXPECT_NE(message("{}").find("SPEC: the inline JSON: spec JSON"), std::string::npos);
  EXPECT_NE(message("").find("SPEC: empty"), std::string::npos);
  // The content seed is a decimal u64 by the CLI's rule: no sign, no fraction, no overflow.
  for (const char* seed : {"-1", "1.5", "18446744073709551616", " 7", ""}) {
    nlohmann::json bad = gen::spec_to_json(spec);
    bad["content_seed"] = seed;
    EXPECT_NE(message(bad.dump()).find("content_seed '" + std::string(seed) + "' is not a decimal"),
              std::string::npos)
        << seed;
  }
  nlohmann::json largest = gen::spec_to_json(spec);
  largest["content_seed"] = "18446744073709551615";
  EXPECT_EQ(std::get<gen::AttentionSpec>(check::parse_reproduce_spec(largest.dump(), "SPEC"))
                .content_seed,
            UINT64_MAX);
  spec.block_table = {5};  // outside the pool of one block
  EXPECT_NE(message(gen::spec_to_json(spec).dump()).find("block_table"), std::string::npos);
  EXPECT_THROW(check::replay_spec(gen::AttentionSpec{}, {target("sim_gather_reference")},
                                  options(1), inline_factory()),
               std::invalid_argument);
}

TEST_F(Engine, ShardsAreADisjointCoverAndMerge) {
  const check::Shard a{0, 3}, b{1, 3}, c{2, 3};
  std::set<int64_t> seen;
  for (const auto& s : {a, b, c}) {
    for (int64_t i : s.cases(50)) EXPECT_TRUE(seen.insert(i).second) << i;
  }
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_THROW(check::parse_shard("3/3"), std::invalid_argument);
  EXPECT_THROW(check::parse_shard("1"), std::invalid_argument);
  EXPECT_EQ(check::parse_shard("2/5").text(), "2/5");

  const std::vector<check::Target> targets{target("sim_reference"), target("sim_gather_reference")};
  const check::RunReport whole = check::run_verification(targets, options(30), inline_factory());
  std::vector<check::RunReport> parts;
  for (const auto& s : {a, b, c}) {
    check::VerifyOptions o = options(30);
    o.shard = s;
    parts.push_back(check::run_verification(targets, o, inline_factory()));
    // Through JSON, as `pagecheck verify merge` reads them.
    parts.back() =
        nlohmann::json::parse(nlohmann::json(parts.back()).dump()).get<check::RunReport>();
  }
  const check::RunReport merged = check::merge_reports(parts);
  ASSERT_EQ(merged.variants.size(), whole.variants.size());
  for (std::size_t i = 0; i < whole.variants.size(); ++i) {
    EXPECT_EQ(merged.variants[i].run, whole.variants[i].run);
    EXPECT_EQ(merged.variants[i].passed, whole.variants[i].passed);
    EXPECT_EQ(merged.variants[i].regimes, whole.variants[i].regimes);
    EXPECT_EQ(merged.variants[i].tags, whole.variants[i].tags);
  }
  EXPECT_TRUE(merged.notes.empty());
  const check::RunReport partial = check::merge_reports({parts[0], parts[2]});
  ASSERT_EQ(partial.notes.size(), 1u);
  EXPECT_NE(partial.notes[0].find("1"), std::string::npos);
  EXPECT_THROW(check::merge_reports({parts[0], parts[0]}), std::invalid_argument);
}

#ifdef PAGECHECK_SIM_WORKER
check::ExecutorFactory process_factory(double timeout_s) {
  return [timeout_s](int) {
    return std::make_unique<check::WorkerProcess>(std::vector<std::string>{PAGECHECK_SIM_WORKER},
                                                  timeout_s);
  };
}

TEST_F(Engine, WorkerProcessRunsCasesAndSurvivesACrashingKernel) {
  const check::Target crash = target("sim_crash");
  check::VerifyOptions o = options(40);
  const check::RunReport report = check::run_verification({crash}, o, process_factory(60));
  const check::VariantReport& v = report.variants.at(0);
  ASSERT_TRUE(v.failure.has_value());
  EXPECT_EQ(v.failure->outcome, check::Outcome::kCrashed) << v.failure->message;
  EXPECT_NE(v.failure->message.find("signal"), std::string::npos) << v.failure->message;
  // Shrinking went on across crashes down to the smallest crashing width.
  EXPECT_EQ(std::get<gen::AttentionSpec>(gen::spec_from_json(v.failure->spec)).num_seqs, 3);
  EXPECT_GT(v.failure->shrink_steps, 1);
  EXPECT_GT(v.passed, 0);
}

TEST_F(Engine, WorkerProcessTimesOutAHangingKernel) {
  check::WorkerProcess worker({PAGECHECK_SIM_WORKER}, 2.0);
  const nlohmann::json hello = worker.hello();
  EXPECT_TRUE(hello.at("available").get<bool>());
  check::CaseRequest request;
  request.registry = "sim";
  request.variant = "sim_hang";
  gen::AttentionSpec spec;
  spec.num_seqs = 5;
  spec.context_lens = {1, 1, 1, 1, 1};
  spec.num_blocks = 5;
  spec.block_table = {0, 1, 2, 3, 4};
  request.spec = spec;
  const check::CaseResult r = worker.run(request);
  EXPECT_EQ(r.outcome, check::Outcome::kTimeout) << r.summary();
  // The next case runs on a fresh worker.
  request.variant = "sim_reference";
  const check::CaseResult next = worker.run(request);
  EXPECT_EQ(next.outcome, check::Outcome::kPassed) << next.summary();
  EXPECT_EQ(worker.starts(), 2);
}
#endif

}  // namespace
}  // namespace pagecheck::verify
