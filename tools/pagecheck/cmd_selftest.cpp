/// `pagecheck selftest`: the default verification against every planted bug (deliberately
/// broken variants registered only in the self-test's registry) and the correct controls built
/// from the same kernels. Fails unless every bug is caught and every control passes; prints per
/// bug the shrunk counterexample's size and the time to find it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "case_run_options.h"
#include "commands.h"
#include "output_paths.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/check/device_worker.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/planted.h"
#include "pagecheck/verify/planted_features.h"
#include "run_progress.h"

namespace pagecheck::cli {
namespace {

namespace check = verify::check;
namespace gen = verify::gen;

/// Seconds a planted bug's counterexample may shrink (it shrinks quickly; verify allows more).
constexpr double kSelftestShrinkBudgetS = 60;

struct SelftestOptions {
  /// Cases (those of the default verification), seed, device, workers, artefacts, limits
  /// (the shrink budget kSelftestShrinkBudgetS).
  CaseRunOptions run;
  std::string json_path;  ///< --json FILE
  int no_gpu_exit = 3;    ///< exit status without a GPU (CTest uses a skip code)
  bool simulate = false;  ///< the CPU simulations instead of the planted CUDA kernels
};

/// True for variants that must pass (controls).
bool is_control(const check::Target& t) {
  if (t.registry == "sim") {
    const auto names = check::correct_sim_variants();
    return std::find(names.begin(), names.end(), t.caps.name) != names.end();
  }
  for (const auto& p : verify::planted_catalogue()) {
    if (p.name == t.caps.name) return p.control;
  }
  return false;
}

/// True for planted split-K bugs: their counterexample must shrink to one (long) sequence.
bool is_split_k_bug(const check::Target& t) {
  if (t.registry == "sim") return t.caps.name.find("partition") != std::string::npos;
  for (const auto& p : verify::planted_catalogue()) {
    if (p.name == t.caps.name) return !p.control && p.description.find("split-K") == 0;
  }
  return false;
}

/// True for planted races (a result that changes between runs, each run within tolerance):
/// only the determinism check sees them, so they must be caught as `nondeterministic`.
bool is_race_bug(const check::Target& t) {
  return !is_control(t) && t.caps.name.find("_race_") != std::string::npos;
}

/// For the bugs of issues 15 and 16 (planted_features.h, planted and simulated): what the
/// shrunk counterexample lacks of the edge that exposes the bug ("" when it shows it, or for
/// other variants). A bug caught on a case without its edge is caught for another reason.
std::string missing_edge(const check::Target& t, const gen::CaseSpec& spec) {
  namespace planted = verify::planted;
  const planted::FeatureDecl* d = planted::find_feature_decl(t.caps.name.c_str());
  if (d == nullptr || d->edge == planted::Edge::kNone) return "";
  const auto* a = std::get_if<gen::AttentionSpec>(&spec);
  const gen::CacheSpec& cache = a != nullptr ? a->cache : std::get<gen::CopySpec>(spec).cache;
  const bool fp8 = dtype_info(cache.kv_dtype).fp8;
  const bool multi = a != nullptr && std::any_of(a->query_lens.begin(), a->query_lens.end(),
                                                 [](int32_t n) { return n > 1; });
  switch (d->edge) {
    case planted::Edge::kFp8:
      return fp8 ? "" : "an fp8 KV cache";
    case planted::Edge::kFp8Gqa:
      return fp8 && a != nullptr && a->num_heads > a->num_kv_heads ? ""
                                                                   : "an fp8 KV cache under GQA";
    case planted::Edge::kNhdHeads:
      return cache.kind == ref::CacheKind::kNHD && a != nullptr && a->num_kv_heads > 1
                 ? ""
                 : "an NHD cache with more than one kv head";
    case planted::Edge::kSinks:
      return a != nullptr && !a->sinks.empty() ? "" : "sinks";
    case planted::Edge::kWindow:
      return a != nullptr && a->window > 0 ? "" : "a window";
    case planted::Edge::kSoftCap:
      return a != nullptr && a->soft_cap > 0 ? "" : "a soft-cap";
    case planted::Edge::kMultiToken:
      return multi ? "" : "a sequence with more than one new token";
    case planted::Edge::kBlockNot16:
      return a != nullptr && a->block_size != planted::kBakedBlockSize
                 ? ""
                 : "a block size other than 16";
    case planted::Edge::kNone:
      break;
  }
  return "";
}

/// Prints one pass's table (and the details of what misbehaved), appends its rows; returns
/// the number of variants that did not behave as expected.
int judge_pass(const std::vector<check::Target>& targets, const check::RunReport& report,
               nlohmann::json& rows) {
  std::printf("  %-4s %-38s %-8s %-13s %8s %9s %7s %9s\n", "", "variant", "expected", "outcome",
              "size", "found (s)", "shrinks", "shrink (s)");
  int wrong = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const check::VariantReport& v = report.variants[i];
    const bool control = is_control(targets[i]);
    const bool caught = v.failure.has_value();
    // A split-K bug needs one sequence over a partition: shrinking must get down to it.
    const int64_t shrunk_seqs = caught ? v.failure->spec.value("num_seqs", int64_t{0}) : int64_t{0};
    const bool split_k_wide = caught && is_split_k_bug(targets[i]) && shrunk_seqs != 1;
    const bool race_missed = caught && is_race_bug(targets[i]) &&
                             v.failure->outcome != check::Outcome::kNondeterministic;
    const std::string edge_gap =
        caught ? missing_edge(targets[i], gen::spec_from_json(v.failure->spec)) : "";
    const bool as_expected =
        control ? v.ok() : caught && !split_k_wide && !race_missed && edge_gap.empty();
    wrong += as_expected ? 0 : 1;
    const std::string outcome =
        caught ? check::outcome_name(v.failure->outcome) : (v.ok() ? "passed" : "refused/errors");
    std::printf("  %-4s %-38s %-8s %-13s %8lld %9.2f %7d %9.2f\n", as_expected ? "ok" : "FAIL",
                v.variant.c_str(), control ? "pass" : "caught", outcome.c_str(),
                static_cast<long long>(caught ? v.failure->shrunk_size : 0),
                caught ? v.failure->seconds_to_find : v.seconds,
                caught ? v.failure->shrink_steps : 0, caught ? v.failure->shrink_seconds : 0.0);
    if (caught) {
      const gen::CaseSpec spec = gen::spec_from_json(v.failure->spec);
      std::printf("         shrunk: %s\n", gen::summary(spec).c_str());
      if (race_missed) {
        std::printf("         race: expected outcome nondeterministic, got %s\n",
                    check::outcome_name(v.failure->outcome));
      }
      if (!edge_gap.empty()) {
        std::printf("         edge: the counterexample should still show %s\n", edge_gap.c_str());
      }
      if (split_k_wide) {
        std::printf("         split-K bug: expected 1 sequence after shrinking, got %lld\n",
                    static_cast<long long>(shrunk_seqs));
      }
    }
    nlohmann::json row = v;
    row["control"] = control;
    row["as_expected"] = as_expected;
    rows.push_back(row);
  }
  if (wrong != 0) {
    std::printf("\nDetails of the variants that did not behave as expected:\n");
    check::RunReport failing = report;
    failing.variants.clear();
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!rows[i]["as_expected"].get<bool>()) failing.variants.push_back(report.variants[i]);
    }
    check::print_summary(std::cout, failing);
  }
  return wrong;
}

int run_selftest(SelftestOptions o) {
  check_output_file(o.json_path, "--json");
  prepare_artifacts(o.run, "selftest");
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  const int jobs = resolved_jobs(o.run);
  check::WorkerSession session(exe, {o.run.device, !o.simulate, o.simulate, {}}, o.run.timeout_s);
  if (!o.simulate && !session.gpu_available()) {
    std::printf("selftest skipped: no GPU: %s\n", session.reason().c_str());
    std::fflush(stdout);
    return o.no_gpu_exit;
  }
  std::vector<check::Target> targets;
  for (const check::Target& t : session.targets({o.simulate ? "sim" : "planted"})) {
    const auto bugs = check::buggy_sim_variants();
    const bool simulated_bug = std::find(bugs.begin(), bugs.end(), t.caps.name) != bugs.end();
    if (!o.simulate || is_control(t) || simulated_bug) targets.push_back(t);
  }
  if (targets.empty()) {
    std::printf("selftest: this build has no planted variants (built without CUDA)\n");
    return o.no_gpu_exit;
  }
  check::VerifyOptions vo = verifier_options(o.run, jobs);
  vo.device = session.device();
  const check::RunReport report = check::run_verification(targets, vo, session.factory());
  std::printf("pagecheck selftest: %d cases per variant, seed %llu, %s\n", o.run.cases,
              static_cast<unsigned long long>(o.run.seed), report.device.c_str());
  std::printf("as declared (each variant judged by its own precision declaration):\n");
  nlohmann::json rows = nlohmann::json::array();
  int wrong = judge_pass(targets, report, rows);

  // Every planted attention bug again, judged under the loosest declaration pagecheck accepts:
  // a variant may declare it, so it must not hide any bug class.
  std::vector<check::Target> attention_bugs;
  for (const check::Target& t : targets) {
    if (t.caps.family == PC_FAMILY_PAGED_ATTENTION && !is_control(t)) attention_bugs.push_back(t);
  }
  check::RunReport loosest_report;
  nlohmann::json loosest_rows = nlohmann::json::array();
  if (!attention_bugs.empty() && !report.interrupted) {
    check::VerifyOptions lo = vo;
    lo.judge_precision = verify::PrecisionModel::loosest();
    loosest_report = check::run_verification(attention_bugs, lo, session.factory());
    std::printf("under the loosest accepted model (%s):\n",
                verify::PrecisionModel::loosest().describe().c_str());
    wrong += judge_pass(attention_bugs, loosest_report, loosest_rows);
  }
  const std::size_t judged = targets.size() + attention_bugs.size();
  std::printf("%s: %d of %zu runs as expected (%.1f s)\n", wrong == 0 ? "PASSED" : "FAILED",
              static_cast<int>(judged) - wrong, judged,
              report.wall_seconds + loosest_report.wall_seconds);
  if (!o.json_path.empty()) {
    nlohmann::json doc{{"schema", "pagecheck.selftest/1"},
                       {"report", report},
                       {"variants", rows},
                       {"loosest_report", loosest_report},
                       {"loosest_variants", loosest_rows},
                       {"passed", wrong == 0}};
    verify::write_file_atomically(o.json_path, doc.dump(2) + "\n");
  }
  if (std::filesystem::exists(o.run.artifacts)) {
    std::printf("artefacts: %s\n", o.run.artifacts.c_str());
  }
  if (report.interrupted) {
    std::printf("interrupted: the results above are partial\n");
    return kInterruptedExit;
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace

void add_selftest_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SelftestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "selftest", "Run the default verification against planted bugs: every one must be caught");
  o->run.shrink_budget_s = kSelftestShrinkBudgetS;
  add_case_run_options(*cmd, o->run, "selftest");
  cmd->add_option("--json", o->json_path, "Also write the results as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--no-gpu-exit", o->no_gpu_exit, "Exit status when there is no GPU")
      ->capture_default_str()
      ->check(CLI::Range(0, 255));
  cmd->add_flag("--simulate", o->simulate, "Use the CPU simulations of the bugs (no GPU needed)");
  cmd->callback([o, &exit_code] { exit_code = run_selftest(*o); });
}

}  // namespace pagecheck::cli
