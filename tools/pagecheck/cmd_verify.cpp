/// `pagecheck verify`: property-based verification of every kernel variant against the CPU
/// reference on the GPU (cases run in worker processes: the parent never touches CUDA), with
/// shrinking, reproduce strings and HDF5 artefacts; `verify merge` joins shard reports. With no
/// GPU it says so and runs the reference self-check (CPU reference vs the dense oracle) only.
/// The hidden `verify-worker` subcommand is the worker process.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "arg_checks.h"
#include "case_run_options.h"
#include "commands.h"
#include "output_paths.h"
#include "pagecheck/bench/process.h"
#include "pagecheck/registry.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"
#include "pagecheck/review/git.h"
#include "pagecheck/review/verification_from_run.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/check/artifact.h"
#include "pagecheck/verify/check/device_worker.h"
#include "pagecheck/verify/check/junit.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/reference_selfcheck.h"
#include "record_evidence.h"
#include "record_units.h"
#include "run_progress.h"
#include "verify_dry_run.h"

namespace pagecheck::cli {
namespace {

namespace check = verify::check;

struct VerifyOptions {
  std::string kernel;          ///< family filter
  std::string variant;         ///< variant filter
  CaseRunOptions run;          ///< cases, seed, device, workers, artefacts, time limits
  std::string json_path;       ///< --json FILE
  std::string devices;         ///< --devices all|0,1,... ("": the one --device)
  int simulated_devices = 1;   ///< --simulated-devices N (hidden): devices --simulate pretends
  std::string shard = "0/1";   ///< --shard I/N
  std::string reproduce;       ///< --reproduce FILE
  std::string reproduce_spec;  ///< --reproduce-spec FILE|JSON
  bool golden = false;         ///< --golden
  std::string golden_dir;      ///< --golden-dir DIR
  std::vector<std::string> plugins;  ///< --plugin LIB
  std::string junit_path;            ///< --junit FILE
  double determinism_share = 1;      ///< --determinism-share F (cases run twice)
  bool record = false;               ///< --record
  std::string repo;                  ///< --repo DIR
  int selfcheck_cases = 64;          ///< --selfcheck-cases N
  bool simulate = false;             ///< --simulate (hidden): CPU simulations instead of a GPU
  bool dry_run = false;  ///< --dry-run: draw the cases, print what they cover, run nothing
};

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

/// The report's device text of a multi-device run: "2 x NVIDIA H200 (...)" when the devices
/// are alike, else their descriptions joined by "; ".
std::string devices_text(const std::vector<check::DeviceSlot>& slots) {
  bool alike = true;
  std::string joined;
  for (const auto& d : slots) {
    alike = alike && d.description == slots.front().description;
    joined += (joined.empty() ? "" : "; ") + d.description;
  }
  if (slots.size() > 1 && alike) {
    return std::to_string(slots.size()) + " x " + slots.front().description;
  }
  return joined;
}

/// The devices of `--devices TEXT`: the count comes from a worker on device 0 (the parent
/// never calls CUDA), or is --simulated-devices under --simulate. Returns nullopt after
/// printing why when no device is visible.
std::optional<std::vector<int>> listed_devices(const VerifyOptions& o, int* count_out) {
  int count = o.simulated_devices;
  std::string reason = "--simulated-devices 0";
  if (!o.simulate) {
    check::WorkerSession probe(self_exe(), {0, false, false, o.plugins}, o.run.timeout_s);
    count = probe.device_count();
    reason = probe.reason();
  }
  *count_out = count;
  if (count == 0) {
    std::printf("no GPU: --devices %s found no CUDA device (%s): nothing verified\n",
                o.devices.c_str(), reason.empty() ? "cudaGetDeviceCount is 0" : reason.c_str());
    return std::nullopt;
  }
  try {
    return check::parse_device_list(o.devices, count);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

/// The reference self-check (no GPU): per-family totals, failures, JSON.
int run_selfcheck_only(const VerifyOptions& o, const std::string& reason) {
  std::printf("no GPU: %s\nGPU kernels not verified; running the reference self-check only.\n",
              reason.c_str());
  std::fflush(stdout);  // seen at once in CI logs, before the self-check runs
  const verify::SelfcheckReport report =
      verify::run_reference_selfcheck(o.run.seed, o.selfcheck_cases);
  struct Totals {
    int cases = 0, passed = 0;
    double seconds = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Totals> totals;
  for (const auto& c : report.cases) {
    if (!totals.count(c.family)) order.push_back(c.family);
    Totals& t = totals[c.family];
    ++t.cases;
    t.passed += c.passed ? 1 : 0;
    t.seconds += c.seconds;
  }
  std::printf("reference self-check (CPU reference vs dense oracle, seed %llu)\n",
              static_cast<unsigned long long>(o.run.seed));
  std::printf("  %-20s %6s %6s %6s %9s\n", "family", "cases", "passed", "failed", "seconds");
  for (const auto& family : order) {
    const Totals& t = totals[family];
    std::printf("  %-20s %6d %6d %6d %9.3f\n", family.c_str(), t.cases, t.passed,
                t.cases - t.passed, t.seconds);
  }
  for (const auto& c : report.cases) {
    if (!c.passed) std::printf("  FAILED %s: %s\n", c.name.c_str(), c.detail.c_str());
  }
  if (!o.json_path.empty()) {
    nlohmann::json doc;
    doc["seed"] = o.run.seed;
    doc["all_passed"] = report.all_passed();
    doc["gpu"] = {{"ran", false}, {"skipped_reason", reason}};
    doc["cases"] = nlohmann::json::array();
    for (const auto& c : report.cases) {
      doc["cases"].push_back({{"name", c.name},
                              {"family", c.family},
                              {"passed", c.passed},
                              {"detail", c.detail},
                              {"seconds", c.seconds}});
    }
    verify::write_file_atomically(o.json_path, doc.dump(2) + "\n");
  }
  if (!o.junit_path.empty()) {
    std::map<std::string, check::JUnitCase> by_family;
    for (const auto& c : report.cases) {
      check::JUnitCase& j = by_family[c.family];
      j.classname = "pagecheck.reference_selfcheck";
      j.name = c.family;
      j.seconds += c.seconds;
      if (!c.passed) {
        j.problem = "failure";
        j.message = "the CPU reference disagrees with the dense oracle";
        j.text += c.name + ": " + c.detail + "\n";
      }
    }
    std::vector<check::JUnitCase> cases;
    for (const auto& family : order) cases.push_back(by_family[family]);
    double seconds = 0;
    for (const auto& c : cases) seconds += c.seconds;
    check::write_junit(o.junit_path, "pagecheck verify (no GPU: " + reason + ")", cases, seconds);
  }
  return report.all_passed() ? 0 : 1;
}

/// `--golden`: every variant against every golden, in a child process (CUDA stays out of
/// this one). Returns its exit status; `dir_used` receives the golden folder it checked.
int run_golden_child(const VerifyOptions& o, std::string* dir_used) {
  std::vector<std::string> argv =
      check::worker_command(self_exe(), {o.run.device, false, false, o.plugins});
  argv.push_back("--golden");
  const auto dir = verify::golden::resolve_golden_dir(o.golden_dir, "--golden-dir");
  std::printf("goldens: %s\n", dir.describe().c_str());
  argv.push_back(dir.path);
  *dir_used = argv.back();
  std::string command;
  for (const auto& a : argv) {  // single-quoted, with ' written as '\''
    command += "'";
    for (char c : a) command += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += "' ";
  }
  std::fflush(stdout);
  std::cout.flush();
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) {
    std::printf("golden verification: the worker died (status %d)\n", status);
    return 1;
  }
  if (WEXITSTATUS(status) != 0) {
    std::printf("golden verification failed (exit %d)\n", WEXITSTATUS(status));
  }
  return WEXITSTATUS(status);
}

/// Repository that --record writes into: --repo, else found from the current directory.
std::string record_repo(const VerifyOptions& o) {
  const std::string cwd = std::filesystem::current_path().string();
  return o.repo.empty() ? review::find_repo_root(cwd, cwd) : o.repo;
}

/// RapidCheck's RC_PARAMS steers nothing in `verify` (cases come from --seed, replays from
/// --reproduce-spec): a value there is a mistake (e.g. an old reproduce=… string), not ignored.
void refuse_rc_params() {
  const char* rc_params = std::getenv("RC_PARAMS");
  if (rc_params == nullptr || std::string(rc_params).find_first_not_of(" \t") == std::string::npos)
    return;
  throw UsageError(std::string("RC_PARAMS is set ('") + rc_params +
                   "'), but pagecheck verify does not read it: cases come from --seed, and a "
                   "counterexample replays with --reproduce-spec SPEC (its COUNTEREXAMPLE block "
                   "prints the line); unset RC_PARAMS");
}

int run_verify(VerifyOptions o) {
  if (o.golden || !o.golden_dir.empty()) {  // a bad golden folder: exit 2 before any work
    (void)verify::golden::resolve_golden_dir(o.golden_dir, "--golden-dir");
  }
  refuse_rc_params();
  std::optional<verify::gen::CaseSpec> replay;
  if (!o.reproduce_spec.empty()) {
    try {
      replay = check::parse_reproduce_spec(o.reproduce_spec, "--reproduce-spec");
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const check::Shard shard = check::parse_shard(o.shard);
  if (!o.kernel.empty()) parse_family(o.kernel);  // unknown family: exit 2
  check_plugins_loadable(o.plugins);              // bad plugin: exit 2
  if (o.record) {
    check_record_sources(record_repo(o),
                         check_record_units(record_repo(o), o.plugins, o.kernel, o.variant));
  }
  if (o.reproduce.empty() && !replay && shard.cases(o.run.cases).empty()) {
    throw UsageError("--shard " + o.shard + " gets no case of --cases " +
                     std::to_string(o.run.cases) + " (shard I runs the cases I, I+N, ...)");
  }
  if (!o.simulate) check_variant_filter(o.kernel, o.variant, o.plugins);  // before the GPU check
  std::vector<std::string> inputs = o.plugins;  // the outputs never replace what the run reads
  inputs.insert(inputs.end(), {o.reproduce, o.reproduce_spec});
  check_output_file(o.json_path, "--json", inputs);
  if (o.dry_run) {  // no GPU, no worker: the cases' specs and what they cover
    return run_dry_run(dry_run_targets(o.simulate, o.plugins, o.kernel, o.variant),
                       {o.run.seed, o.run.cases, shard, o.json_path});
  }
  check_output_file(o.junit_path, "--junit", inputs);
  prepare_artifacts(o.run, "verify");
  if (!o.reproduce.empty()) {  // names the problem (exit 2) before the GPU check
    try {
      check::check_artifact(o.reproduce);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--reproduce: ") + e.what());
    }
  }
  int jobs = resolved_jobs(o.run);
  const check::WorkerOptions worker_options{o.run.device, false, o.simulate, o.plugins};
  std::unique_ptr<check::WorkerSession> single;
  std::unique_ptr<check::DeviceSessions> multi;  // --devices: a session per device
  if (!o.devices.empty()) {
    int visible = 0;
    const auto listed = listed_devices(o, &visible);
    if (!listed) return 3;
    multi = std::make_unique<check::DeviceSessions>(self_exe(), worker_options, *listed,
                                                    o.run.timeout_s);
    for (const auto& d : multi->dropped()) std::printf("%s\n", d.c_str());
    if (multi->empty()) {
      std::printf("no GPU: no listed device is usable: nothing verified\n");
      return 3;
    }
    jobs = std::max(jobs, static_cast<int>(multi->devices().size()));  // each device works
    o.run.device = multi->devices().front().index;  // replays and --golden run there
  } else {
    single = std::make_unique<check::WorkerSession>(self_exe(), worker_options, o.run.timeout_s);
  }
  check::WorkerSession& session = multi ? multi->first() : *single;
  const check::ExecutorFactory factory = multi ? multi->factory() : session.factory();

  if (!o.reproduce.empty()) {
    if (!session.gpu_available() && !o.simulate) {
      std::printf("no GPU: %s\ncannot replay %s\n", session.reason().c_str(), o.reproduce.c_str());
      return 3;
    }
    auto executor = factory(0);
    const check::CaseResult r =
        executor->replay(o.reproduce, check::WorkerSession::default_ref_threads(1));
    std::printf("replay of %s: %s\n", o.reproduce.c_str(), r.summary().c_str());
    if (r.outcome == check::Outcome::kError) return 3;
    return r.failed() ? 1 : 0;
  }
  if (replay && !session.gpu_available() && !o.simulate) {
    std::printf("no GPU: %s\ncannot replay the --reproduce-spec case\n", session.reason().c_str());
    return 3;
  }
  if (o.record && !session.gpu_available() && !o.simulate) {
    std::printf("no GPU: %s\n--record needs a GPU run: nothing verified, nothing recorded\n",
                session.reason().c_str());
    return 3;
  }
  if (!session.gpu_available() && !o.simulate) return run_selfcheck_only(o, session.reason());

  std::set<std::string> registries{"builtin", "plugin"};
  if (o.simulate) registries = {"sim"};
  std::vector<check::Target> targets;
  std::string known;
  for (const check::Target& t : session.targets(registries)) {
    known +=
        (known.empty() ? "" : ", ") + std::string(family_name(t.caps.family)) + "/" + t.caps.name;
    if (!o.kernel.empty() && family_name(t.caps.family) != o.kernel) continue;
    if (!o.variant.empty() && t.caps.name != o.variant) continue;
    targets.push_back(t);
  }
  if (targets.empty()) {
    throw UsageError("no variant matches --kernel '" + o.kernel + "' --variant '" + o.variant +
                     "' (known: " + (known.empty() ? "none" : known) + ")");
  }

  check::VerifyOptions vo = verifier_options(o.run, jobs);
  vo.shard = shard;
  vo.determinism_share = o.determinism_share;
  vo.device = session.device();
  if (multi && multi->devices().size() > 1) {
    vo.devices = multi->devices();
    vo.device = devices_text(vo.devices);
  }
  check::RunReport report = replay ? check::replay_spec(*replay, targets, vo, factory)
                                   : check::run_verification(targets, vo, factory);
  report.plugins = o.plugins;  // absolute (check_plugins_loadable), for the reproduce lines
  report.tool_version = bench::tool_version();
  if (multi) {
    for (const auto& d : multi->dropped()) report.notes.push_back(d);
  }
  check::print_summary(std::cout, report);
  int64_t cases = 0;
  for (const auto& v : report.variants) cases += v.run;
  std::printf(
      "%lld cases in %.1f s (%.1f cases/s) on %d worker(s)%s\n", static_cast<long long>(cases),
      report.wall_seconds, report.wall_seconds > 0 ? cases / report.wall_seconds : 0.0, jobs,
      vo.devices.empty() ? ""
                         : (" over " + std::to_string(vo.devices.size()) + " devices").c_str());
  if (!o.json_path.empty()) check::write_report(o.json_path, report);
  if (!o.junit_path.empty()) {
    check::write_junit(o.junit_path, "pagecheck verify", check::junit_cases(report),
                       report.wall_seconds);
  }
  if (std::filesystem::exists(o.run.artifacts))
    std::printf("artefacts: %s\n", o.run.artifacts.c_str());
  if (report.interrupted) {
    std::printf("interrupted: the summary above is partial; nothing recorded\n");
    return kInterruptedExit;
  }
  int code = report.exit_code();
  review::GoldenRun golden;  // "not run" unless --golden
  if (o.golden) {
    std::string golden_dir;
    const int status = run_golden_child(o, &golden_dir);
    if (o.record) golden = review::golden_run(record_repo(o), golden_dir, status);
    if (status != 0 && code == 0) code = status;
  }
  if (o.record && !replay) record_evidence(record_repo(o), report, golden);
  return code;
}

/// Options of `verify merge`.
struct MergeOptions {
  std::vector<std::string> files;  ///< shard reports
  std::string json_path;           ///< --json FILE
  std::string junit_path;          ///< --junit FILE
  bool allow_partial = false;      ///< --allow-partial: missing shards are not a failure
};

int run_merge(const MergeOptions& o) {
  if (o.files.empty()) throw UsageError("verify merge: give the shard reports to merge");
  check_output_file(o.json_path, "--json", o.files);  // never over a shard
  check_output_file(o.junit_path, "--junit", o.files);
  std::vector<check::RunReport> reports;
  for (const auto& f : o.files) reports.push_back(check::read_report(f));
  const check::RunReport merged = check::merge_reports(reports, o.files);  // mismatch: exit 2
  check::print_summary(std::cout, merged);
  if (!o.json_path.empty()) check::write_report(o.json_path, merged);
  if (!o.junit_path.empty()) {
    check::write_junit(o.junit_path, "pagecheck verify", check::junit_cases(merged),
                       merged.wall_seconds);
  }
  const int code = merged.exit_code();
  const int present = static_cast<int>(merged.shards.size());
  if (present < merged.shard_count && !o.allow_partial) {
    std::printf("FAILED: %d of %d shards merged (--allow-partial accepts a partial run)\n", present,
                merged.shard_count);
    return code == 0 ? 1 : code;
  }
  if (merged.interrupted && code == 0) {
    std::printf("FAILED: a shard was interrupted, its counts are partial\n");
    return 1;
  }
  return code;
}

/// The hidden worker process (and the child of --golden).
struct WorkerArgs {
  check::WorkerOptions options;
  std::string golden_dir;
  bool golden = false;
};

int run_worker(const WorkerArgs& a) {
  if (!a.golden) return check::run_verify_worker(a.options);
  std::string reason;
  if (!verify::device_available(&reason)) {
    std::printf("golden verification skipped: no GPU: %s\n", reason.c_str());
    return 3;
  }
  verify::select_device(a.options.device);
  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const auto& p : a.options.plugins) registry.load_plugin(p);
  return verify::golden::verify_goldens_on_device(registry, a.golden_dir, std::cout);
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Verify every kernel variant against the CPU reference on random layouts (GPU); "
      "without a GPU, self-check the reference");
  cmd->add_option("--kernel", o->kernel,
                  "Only this family (paged_attention, gather_cached_kv, "
                  "reshape_and_cache)");
  cmd->add_option("--variant", o->variant, "Only this variant");
  CLI::Option* device = add_case_run_options(*cmd, o->run, "verify");
  cmd->add_option("--json", o->json_path, "Also write the report as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--junit", o->junit_path,
                  "Also write JUnit XML to FILE (a test case per variant; a failure holds the "
                  "shrunk counterexample and how to reproduce it)")
      ->type_name("FILE");
  cmd->add_option("--devices", o->devices,
                  "Spread the cases over these GPUs ('all', or indices like 0,1): a worker "
                  "on each, the report per device and merged (equal to a one-GPU run of the "
                  "same seed); a fault on one GPU fails that case only")
      ->type_name("all|I,J,...")
      ->check(device_list())
      ->excludes(device);
  cmd->add_option("--simulated-devices", o->simulated_devices,
                  "Devices --simulate pretends to have (tests of --devices)")
      ->check(CLI::Range(0, 64))
      ->group("");
  cmd->add_option("--shard", o->shard, "Run shard I of N (cases with index = I mod N)")
      ->capture_default_str()
      ->type_name("I/N");
  CLI::Option* reproduce =
      cmd->add_option("--reproduce", o->reproduce, "Replay a failure artefact (HDF5)")
          ->type_name("FILE");
  cmd->add_option("--reproduce-spec", o->reproduce_spec,
                  "Run one case given by its spec JSON (inline, or a file), as a counterexample "
                  "prints it, on the selected variants of its family")
      ->type_name("SPEC")
      ->excludes(reproduce);
  cmd->add_flag("--golden", o->golden, "Also run every variant on every golden fixture");
  cmd->add_option("--golden-dir", o->golden_dir,
                  "Golden directory for --golden (default: $PAGECHECK_FIXTURES_DIR/golden when "
                  "set, else fixtures/golden of the repository found from the current directory)")
      ->type_name("DIR");
  cmd->add_option("--plugin", o->plugins, "Also verify the variants of a plugin library")
      ->type_name("LIB");
  cmd->add_option("--determinism-share", o->determinism_share,
                  "Share of the cases (0 to 1) whose kernel runs twice and must give "
                  "bit-identical outputs")
      ->capture_default_str()
      ->check(unit_interval());
  cmd->add_flag("--record", o->record, "Write verification evidence under fixtures/verification");
  cmd->add_option("--repo", o->repo, "Repository root for --record")->type_name("DIR");
  cmd->add_option("--selfcheck-cases", o->selfcheck_cases, "Reference self-check cases (no GPU)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--simulate", o->simulate, "Verify the CPU simulations (tests of the harness)")
      ->group("");
  cmd->add_flag("--dry-run", o->dry_run,
                "Draw every case of the run without running any (no GPU needed): print the "
                "edge-case and regime counts per variant; with --json FILE, write every "
                "case's spec")
      ->excludes(reproduce)
      ->excludes("--reproduce-spec")
      ->excludes("--record")
      ->excludes("--golden")
      ->excludes("--junit");

  auto m = std::make_shared<MergeOptions>();
  CLI::App* merge = cmd->add_subcommand(
      "merge", "Merge the JSON reports of shards into one summary (a missing shard fails)");
  merge->add_option("reports", m->files, "Shard reports (--json output)")->required();
  merge->add_option("--json", m->json_path, "Write the merged report to FILE")->type_name("FILE");
  merge->add_option("--junit", m->junit_path, "Write the merged JUnit XML to FILE")
      ->type_name("FILE");
  merge->add_flag("--allow-partial", m->allow_partial,
                  "Accept missing shards (they are noted; exit 0 when the rest passed)");
  merge->callback([m, &exit_code] { exit_code = run_merge(*m); });
  cmd->callback([o, merge, &exit_code] {
    if (merge->parsed()) return;
    exit_code = run_verify(*o);
  });

  auto w = std::make_shared<WorkerArgs>();
  CLI::App* worker = app.add_subcommand("verify-worker", "");
  worker->group("");  // hidden: started by `pagecheck verify` and `pagecheck selftest`
  worker->add_option("--device", w->options.device);
  worker->add_flag("--planted", w->options.planted);
  worker->add_flag("--simulate", w->options.simulate);
  worker->add_option("--plugin", w->options.plugins);
  CLI::Option* golden = worker->add_option("--golden", w->golden_dir);
  worker->callback([w, golden, &exit_code] {
    w->golden = golden->count() > 0;
    if (w->golden && w->golden_dir.empty()) throw UsageError("verify-worker --golden: empty DIR");
    exit_code = run_worker(*w);
  });
}

}  // namespace pagecheck::cli
