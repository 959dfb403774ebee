/// The determinism check: every case's kernel runs twice on the same inputs with fresh outputs;
/// a simulated race (right on most runs, one element an ulp off on some) is caught as
/// `nondeterministic` with the first differing element named, in the report, its JSON and the
/// JUnit XML; deterministic variants and a variant that declares nondeterminism pass; both
/// runs' guards are checked; --determinism-share picks evenly spread cases.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/check/case_runner.h"
#include "pagecheck/verify/check/determinism.h"
#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/junit.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify {
namespace {

class Determinism : public ::testing::Test {
 protected:
  check::Target target(const std::string& name) const {
    for (const auto& v : backend_->variants()) {
      if (v.caps.name == name) return check::Target{v.registry, v.caps};
    }
    throw std::logic_error("no sim variant " + name);
  }
  check::ExecutorFactory factory(check::CaseBackend* backend) {
    return [backend](int) {
      return std::make_unique<check::InlineExecutor>(std::vector<check::CaseBackend*>{backend});
    };
  }
  check::VerifyOptions options(int cases) const {
    check::VerifyOptions o;
    o.cases = cases;
    o.seed = 5;
    o.ref_threads = 1;
    o.shrink_budget_s = 30;
    return o;
  }
  check::RunReport verify(const std::string& name, const check::VerifyOptions& o) {
    return check::run_verification({target(name)}, o, factory(backend_.get()));
  }

  std::unique_ptr<check::CaseBackend> backend_ = check::make_sim_backend();
};

TEST_F(Determinism, TheSimulatedRaceIsCaughtAsNondeterministic) {
  const check::RunReport report = verify("sim_race_last_bit", options(100));
  EXPECT_EQ(report.exit_code(), 1);
  const check::VariantReport& v = report.variants.at(0);
  ASSERT_TRUE(v.failure.has_value());
  const check::FailureInfo& f = *v.failure;
  EXPECT_EQ(f.outcome, check::Outcome::kNondeterministic) << f.message;
  EXPECT_TRUE(f.reproduced);  // the simulated race repeats per case: it shrinks
  // The message names the buffer, the element and both runs' bits.
  EXPECT_NE(f.message.find("outputs of two runs on the same inputs differ in "), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("first: out element "), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("(query row "), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("run 1 bits 0x"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("run 2 bits 0x"), std::string::npos) << f.message;
  EXPECT_GE(f.comparison.at("determinism").at("mismatches").get<int64_t>(), 1)
      << f.comparison.dump();
  EXPECT_EQ(v.outcomes.at("nondeterministic"), v.failed);
  EXPECT_EQ(v.runs_twice, v.run);
  // The report's JSON keeps the outcome through a round trip.
  const nlohmann::json j = report;
  const nlohmann::json& jv = j.at("variants").at(0);
  EXPECT_EQ(jv.at("failure").at("outcome"), "nondeterministic");
  EXPECT_EQ(jv.at("runs_twice"), v.run);
  EXPECT_EQ(jv.at("ok"), false);
  const check::RunReport back = j.get<check::RunReport>();
  EXPECT_EQ(back.variants.at(0).failure->outcome, check::Outcome::kNondeterministic);
  EXPECT_EQ(back.exit_code(), 1);
  // JUnit: a <failure> whose message starts with the outcome.
  const std::vector<check::JUnitCase> cases = check::junit_cases(report);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].problem, "failure");
  EXPECT_EQ(cases[0].message.rfind("nondeterministic: outputs of two runs", 0), 0u)
      << cases[0].message;
  EXPECT_NE(check::junit_xml("s", cases, 1).find("nondeterministic"), std::string::npos);
}

TEST_F(Determinism, TheArtefactKeepsBothRunsAndReplaysTheRace) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("pagecheck_det_" + std::to_string(::getpid()));
  check::VerifyOptions o = options(100);
  o.artifact_dir = dir.string();
  const check::RunReport report = verify("sim_race_last_bit", o);
  ASSERT_TRUE(report.variants.at(0).failure.has_value());
  const std::string artefact = report.variants.at(0).failure->artifact;
  ASSERT_FALSE(artefact.empty());
  const golden::GoldenFile file = golden::read_golden_file(artefact);
  const golden::GoldenDataset* first = file.find("actual/out");
  const golden::GoldenDataset* second = file.find("second_run/out");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->dims, second->dims);
  EXPECT_NE(first->bytes, second->bytes);  // the two runs differ, as the message says
  check::InlineExecutor executor({backend_.get()});
  const check::CaseResult replayed = executor.replay(artefact, 1);
  EXPECT_EQ(replayed.outcome, check::Outcome::kNondeterministic) << replayed.summary();
  fs::remove_all(dir);
}

TEST_F(Determinism, TheRaceIsInvisibleWithoutTheSecondRun) {
  // Against the reference alone the race passes: only the determinism check sees it.
  check::VerifyOptions o = options(100);
  o.determinism_share = 0;
  const check::RunReport report = verify("sim_race_last_bit", o);
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_EQ(report.variants.at(0).passed, 100);
  EXPECT_EQ(report.variants.at(0).runs_twice, 0);
}

TEST_F(Determinism, DeterministicVariantsAndADeclaredRacePass) {
  // sim_race_declared is the same race in a variant that declares nondeterminism: each run is
  // compared with the reference instead of with the other, and it passes.
  for (const std::string& name : check::correct_sim_variants()) {
    SCOPED_TRACE(name);
    const check::RunReport report = verify(name, options(60));
    EXPECT_EQ(report.exit_code(), 0);
    EXPECT_EQ(report.variants.at(0).passed, 60);
    EXPECT_EQ(report.variants.at(0).runs_twice, 60);
  }
}

TEST_F(Determinism, TheShareSpreadsCheckedCasesEvenly) {
  const auto count = [](double share) {
    int n = 0;
    for (int64_t i = 0; i < 1000; ++i) n += check::checks_determinism(share, i) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count(1), 1000);
  EXPECT_EQ(count(0), 0);
  EXPECT_EQ(count(0.25), 250);
  EXPECT_EQ(count(0.5), 500);
  EXPECT_TRUE(check::checks_determinism(0.25, 3));
  EXPECT_FALSE(check::checks_determinism(0.25, 4));
  check::VerifyOptions o = options(40);
  o.determinism_share = 0.25;
  EXPECT_EQ(verify("sim_reference", o).variants.at(0).runs_twice, 10);
  // Shards pick the same cases (by index) and their counts add up when merged.
  std::vector<check::RunReport> shards;
  for (int i = 0; i < 2; ++i) {
    o.shard = check::Shard{i, 2};
    shards.push_back(verify("sim_reference", o));
  }
  EXPECT_EQ(check::merge_reports(shards).variants.at(0).runs_twice, 10);
}

/// Wraps the simulation: records what each run received and can make the second run's output
/// differ in one chosen byte, or report its guards overwritten.
class Recording final : public check::CaseBackend {
 public:
  explicit Recording(check::CaseBackend& inner) : inner_(inner) {}
  const std::vector<check::BackendVariant>& variants() const override { return inner_.variants(); }
  bool available(std::string* reason) const override { return inner_.available(reason); }
  std::string description() const override { return "recording"; }
  AttentionRun run_attention(const check::BackendVariant& v, const ref::PagedAttentionProblem& p,
                             const ref::TokenLayout& layout, int run) override {
    return recorded(run, p.query, &AttentionRun::out,
                    [&] { return inner_.run_attention(v, p, layout, run); });
  }
  CopyRun run_gather(const check::BackendVariant& v, const ref::CacheCopyProblem& p,
                     int run) override {
    return recorded(run, p.key, &CopyRun::second, [&] { return inner_.run_gather(v, p, run); });
  }
  CopyRun run_reshape(const check::BackendVariant& v, const ref::CacheCopyProblem& p,
                      int run) override {
    return recorded(run, p.key_cache, &CopyRun::second,
                    [&] { return inner_.run_reshape(v, p, run); });
  }

  std::vector<int> runs;                       ///< run index of every call
  std::vector<std::vector<std::byte>> inputs;  ///< query / key / key_cache each call received
  int64_t flip_byte = -1;                      ///< second run: this output byte's bit 0 flips
  bool break_guards = false;                   ///< second run: guards reported overwritten

 private:
  /// Records the call's run index and `input`, makes the call, and tampers with the second
  /// run's `output`.
  template <typename Run, typename Call>
  Run recorded(int run, const std::vector<std::byte>& input, std::vector<std::byte> Run::*output,
               Call call) {
    runs.push_back(run);
    inputs.push_back(input);
    Run r = call();
    if (run == 1) tamper(r.*output, r.outcome);
    return r;
  }
  void tamper(std::vector<std::byte>& out, DeviceRunOutcome& outcome) const {
    if (flip_byte >= 0) out.at(static_cast<std::size_t>(flip_byte)) ^= std::byte{1};
    if (break_guards) {
      outcome.guards_intact = false;
      outcome.guard_report = "value_cache: 4 bytes changed after the end, first at +0";
    }
  }
  check::CaseBackend& inner_;
};

check::CaseRequest reshape_request() {
  gen::CopySpec spec;
  spec.family = PC_FAMILY_RESHAPE_AND_CACHE;
  spec.dtype = DType::kFloat32;
  spec.cache.kv_dtype = DType::kFloat32;
  spec.block_size = 8;
  spec.num_blocks = 2;
  spec.slot_mapping = {3, -1, 9};
  check::CaseRequest r;
  r.registry = "sim";
  r.variant = "sim_reshape_reference";
  r.spec = spec;
  r.ref_threads = 1;
  return r;
}

TEST_F(Determinism, TheSecondRunGetsTheSameInputsNotTheFirstRunsOutputs) {
  Recording rec(*backend_);
  const check::CaseRequest request = reshape_request();
  const check::CaseResult r = check::run_case({&rec}, request);
  EXPECT_EQ(r.outcome, check::Outcome::kPassed) << r.summary();
  EXPECT_EQ(r.runs, 2);
  ASSERT_EQ(rec.runs, (std::vector<int>{0, 1}));
  // Both runs started from the materialized (poisoned) cache, not from a run's output.
  const ref::CacheCopyProblem fresh = gen::materialize(std::get<gen::CopySpec>(request.spec));
  EXPECT_EQ(rec.inputs.at(0), fresh.key_cache);
  EXPECT_EQ(rec.inputs.at(1), fresh.key_cache);
  ref::CacheCopyProblem written = fresh;
  ref::reshape_and_cache(written);
  EXPECT_NE(written.key_cache, fresh.key_cache);  // so the check above can tell them apart
}

TEST_F(Determinism, ACopyWhoseRunsDifferNamesTheElement) {
  Recording rec(*backend_);
  rec.flip_byte = 4 * 9;  // value_cache element 9: block 0, head 0, slot 1, dim 1
  const check::CaseResult r = check::run_case({&rec}, reshape_request());
  EXPECT_EQ(r.outcome, check::Outcome::kNondeterministic);
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.message.find("differ in 1 of "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("first: value_cache element 9 (block 0, head 0, slot 1, dim 1): "
                           "run 1 bits 0x"),
            std::string::npos)
      << r.message;
  // Without the second run the same backend passes.
  check::CaseRequest once = reshape_request();
  once.check_determinism = false;
  Recording rec_once(*backend_);
  rec_once.flip_byte = 4 * 9;
  const check::CaseResult single = check::run_case({&rec_once}, once);
  EXPECT_EQ(single.outcome, check::Outcome::kPassed) << single.summary();
  EXPECT_EQ(single.runs, 1);
  EXPECT_EQ(rec_once.runs, (std::vector<int>{0}));
}

TEST_F(Determinism, TheSecondRunsGuardsAreChecked) {
  Recording rec(*backend_);
  rec.break_guards = true;
  const check::CaseResult r = check::run_case({&rec}, reshape_request());
  EXPECT_EQ(r.outcome, check::Outcome::kIncorrect);
  EXPECT_EQ(r.message.rfind("second run: guard zone overwritten: value_cache", 0), 0u) << r.message;
}

TEST_F(Determinism, OutcomeNamesRoundTrip) {
  EXPECT_STREQ(check::outcome_name(check::Outcome::kNondeterministic), "nondeterministic");
  EXPECT_EQ(check::parse_outcome("nondeterministic"), check::Outcome::kNondeterministic);
  EXPECT_TRUE(check::is_kernel_failure(check::Outcome::kNondeterministic));
  check::CaseResult r;
  r.outcome = check::Outcome::kNondeterministic;
  r.runs = 2;
  const check::CaseResult back = nlohmann::json(r).get<check::CaseResult>();
  EXPECT_EQ(back.outcome, check::Outcome::kNondeterministic);
  EXPECT_EQ(back.runs, 2);
  check::CaseRequest q = reshape_request();
  q.check_determinism = false;
  EXPECT_FALSE(nlohmann::json(q).get<check::CaseRequest>().check_determinism);
}

}  // namespace
}  // namespace pagecheck::verify
