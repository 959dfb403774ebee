/// The options of the commands that run verification cases (case_run_options.h).
#include "case_run_options.h"

#include "arg_checks.h"
#include "output_paths.h"
#include "pagecheck/verify/check/device_worker.h"
#include "run_progress.h"

namespace pagecheck::cli {

CLI::Option* add_case_run_options(CLI::App& cmd, CaseRunOptions& o, const std::string& command) {
  cmd.add_option("--cases", o.cases, "Cases per variant")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd.add_option("--seed", o.seed, "Run seed (0 to 2^64-1)")
      ->capture_default_str()
      ->check(seed_value());
  CLI::Option* device = cmd.add_option("--device", o.device, "CUDA device index")
                            ->capture_default_str()
                            ->check(CLI::Range(0, 1023));
  cmd.add_option("--jobs", o.jobs, "Parallel worker processes (0: automatic)")
      ->check(CLI::Range(0, 64));
  cmd.add_option("--artifacts", o.artifacts,
                 "Directory for the counterexamples' artefacts (default: a new run folder "
                 "$TMPDIR/pagecheck-runs/" +
                     command + "-<UTC time>-<pid>, printed at the end)")
      ->type_name("DIR");
  cmd.add_option("--case-timeout", o.timeout_s, "Seconds before a case counts as hung")
      ->capture_default_str()
      ->check(positive_finite());
  cmd.add_option("--shrink-budget", o.shrink_budget_s, "Seconds spent shrinking one counterexample")
      ->capture_default_str()
      ->check(positive_finite());
  return device;
}

void prepare_artifacts(CaseRunOptions& o, const std::string& command) {
  if (o.artifacts.empty()) o.artifacts = default_run_folder(command);
  check_output_folder(o.artifacts, "--artifacts");
}

int resolved_jobs(const CaseRunOptions& o) {
  return o.jobs > 0 ? o.jobs : verify::check::WorkerSession::default_jobs();
}

verify::check::VerifyOptions verifier_options(const CaseRunOptions& o, int jobs) {
  verify::check::VerifyOptions v;
  v.cases = o.cases;
  v.seed = o.seed;
  v.jobs = jobs;
  v.ref_threads = verify::check::WorkerSession::default_ref_threads(jobs);
  v.shrink_budget_s = o.shrink_budget_s;
  v.artifact_dir = o.artifacts;
  v.progress = progress_printer();
  catch_interrupt();
  v.stop = interrupted;
  return v;
}

}  // namespace pagecheck::cli
