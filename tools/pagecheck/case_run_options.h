#pragma once
/// The options of every command that runs verification cases through worker processes
/// (`verify`, `selftest`), declared once: how many cases, which seed and device, how many
/// workers, where artefacts go, and the time limits of a case and of a shrink.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "pagecheck/review/evidence.h"
#include "pagecheck/verify/check/verifier.h"

namespace pagecheck::cli {

/// What `--cases`, `--seed`, `--device`, `--jobs`, `--artifacts`, `--case-timeout` and
/// `--shrink-budget` set.
struct CaseRunOptions {
  int cases = static_cast<int>(review::kDefaultCasesPerVariant);  ///< cases per variant
  uint64_t seed = 1;                                              ///< run seed
  int device = 0;                                                 ///< CUDA device index
  int jobs = 0;                  ///< worker processes (0: automatic)
  std::string artifacts;         ///< artefact folder ("": a new run folder, default_run_folder)
  double timeout_s = 300;        ///< seconds before a case counts as hung
  double shrink_budget_s = 120;  ///< seconds spent shrinking one counterexample
};

/// Adds the options of CaseRunOptions to `cmd`, with the values in `o` as their defaults;
/// `command` names the default run folder in the help of `--artifacts`. Returns `--device`
/// (for options that exclude it).
CLI::Option* add_case_run_options(CLI::App& cmd, CaseRunOptions& o, const std::string& command);

/// Before any work: a new run folder for `command` when `--artifacts` was not given, then
/// checks that it can be written (UsageError naming `--artifacts` otherwise).
void prepare_artifacts(CaseRunOptions& o, const std::string& command);

/// `--jobs`, or the automatic count where it is 0.
int resolved_jobs(const CaseRunOptions& o);

/// The verifier's options that follow from `o` with `jobs` workers: cases, seed, jobs,
/// reference threads per case, shrink budget, artefact folder; progress printed and SIGINT
/// caught (run_progress.h). The caller adds the device and what only it knows.
verify::check::VerifyOptions verifier_options(const CaseRunOptions& o, int jobs);

}  // namespace pagecheck::cli
