#pragma once
/// Property-based verification of kernel variants. Case i of a variant is drawn from a
/// RapidCheck generator (`gen(Random(seed_i), size_i)`, public API only) seeded from (run seed,
/// i), at a size that ramps over the run, so a case's spec depends only on (seed, cases, i) and
/// shards split the run by index. Cases run in parallel on worker processes; the first failing
/// case of a variant is then shrunk along its RapidCheck shrink tree
/// (rc::shrinkable::findLocalMin; each step one case on a worker, surviving crashed workers) to
/// a locally smallest failing spec, reported with its JSON (which replays it:
/// replay_spec(), `pagecheck verify --reproduce-spec`) and an HDF5 artefact.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/verify/check/devices.h"
#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/report.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::check {

/// A variant to verify.
struct Target {
  std::string registry = "builtin";  ///< registry the worker finds it in
  gen::VariantCaps caps;             ///< declared support
  /// "builtin:paged_attention/v1_baseline".
  std::string id() const;
};

/// How case i of a run is generated.
struct CaseParams {
  int64_t index = 0;     ///< case index
  uint64_t rc_seed = 0;  ///< RapidCheck seed of the case
  int size = 0;          ///< RapidCheck size (0..100), ramping over the run
  bool large = false;    ///< the case must use a cache over 2^31 elements
};

/// Parameters of case `index` of a run of `cases` cases. The last case of a variant that
/// declares PC_CAP_LARGE_CACHE is its large-cache case.
CaseParams case_params(const Target& target, uint64_t seed, int cases, int64_t index);
/// Id of a case's generator: "<target id>/size=S/large=L" (reports keep it as `rc_id`).
std::string rc_test_id(const Target& target, const CaseParams& params);
/// The generator a case draws from.
rc::Gen<gen::CaseSpec> case_generator(const Target& target, const CaseParams& params);
/// The spec of a case (deterministic).
gen::CaseSpec generate_case(const Target& target, const CaseParams& params);

/// Options of a run.
struct VerifyOptions {
  int cases = 200;      ///< cases per variant (before sharding)
  uint64_t seed = 1;    ///< run seed
  Shard shard;          ///< this process's shard
  int jobs = 1;         ///< parallel executors (worker processes)
  int ref_threads = 0;  ///< reference threads per case (0 = all cores)
  /// Judge every attention case under this model instead of each variant's declaration
  /// (selftest's loosest-model pass; CaseRequest::judge_precision).
  std::optional<PrecisionModel> judge_precision;
  double shrink_budget_s = 120;  ///< time limit for shrinking one counterexample
  std::string artifact_dir;      ///< where failure artefacts go ("" = none)
  std::string device;            ///< device description for the report
  /// The GPUs of a multi-device run: executor w runs on devices[device_slot_of(w, size)]
  /// (the executor factory must start it there), and the report counts each device's cases
  /// (RunReport::devices). Empty or one device: a one-device run, no per-device counts.
  std::vector<DeviceSlot> devices;
  /// Share of the cases (0..1) whose kernel runs twice and must agree bit for bit (the
  /// determinism check, see determinism.h); 1: every case. Shrink steps always check.
  double determinism_share = 1.0;
  /// Called about twice a second with a one-line progress text (may be empty): cases done of
  /// total, failing variants, elapsed seconds and an estimate of the time left.
  std::function<void(const std::string&)> progress;
  /// Polled between cases: once it returns true, no new case starts, running cases finish,
  /// nothing is shrunk, and the report is partial (RunReport::interrupted, a note).
  std::function<bool()> stop;
};

/// Makes executor number `worker` (0 .. jobs-1); executor 0 also shrinks.
using ExecutorFactory = std::function<std::unique_ptr<CaseExecutor>(int worker)>;

/// Verifies every target.
RunReport run_verification(const std::vector<Target>& targets, const VerifyOptions& options,
                           const ExecutorFactory& make_executor);

/// The spec a `--reproduce-spec` argument names: inline JSON (text starting with '{') or the
/// path of a file holding it, as reports print it (FailureInfo::reproduce) and store it
/// (FailureInfo::spec). Throws std::invalid_argument naming `what` and the problem (unreadable
/// file, malformed JSON, missing or bad field, an inconsistent spec).
gen::CaseSpec parse_reproduce_spec(const std::string& argument, const std::string& what);

/// Runs `spec` once on every target of its family (one case each, no shrinking), reporting a
/// failure as that target's counterexample. Throws std::invalid_argument when no target is of
/// the spec's family.
RunReport replay_spec(const gen::CaseSpec& spec, const std::vector<Target>& targets,
                      const VerifyOptions& options, const ExecutorFactory& make_executor);

}  // namespace pagecheck::verify::check
