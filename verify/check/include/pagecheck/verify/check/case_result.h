#pragma once
/// One verification case: the request a runner receives (which variant, which spec) and the
/// result it sends back. Both travel as one JSON line between the parent and the worker.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify::check {

/// How a case ended (a CUTLASS-style disposition, not a bool).
enum class Outcome : int32_t {
  kPassed = 0,        ///< outputs match the reference (bit exact / within tolerance)
  kIncorrect = 1,     ///< outputs differ, or a guard zone was overwritten
  kNotSupported = 2,  ///< the variant refused a problem it declares (PC_STATUS_UNSUPPORTED)
  kInvalid = 3,       ///< the variant called valid arguments invalid
  kLaunchFailed = 4,  ///< launch returned an error (context still usable)
  kFault = 5,         ///< sticky CUDA error (illegal address, ...): the worker restarts
  kCrashed = 6,       ///< the worker process died during the case
  kTimeout = 7,       ///< the case did not finish in time (the worker was killed)
  kError = 8,         ///< the harness itself failed (materialize, reference, protocol)
  /// Two runs on the same inputs (freshly poisoned outputs) gave outputs that differ in some
  /// bit, and the variant does not declare itself nondeterministic: a race is a bug even when
  /// it usually gives the right answer.
  kNondeterministic = 9,
};
/// "passed", "incorrect", "not_supported", "invalid", "launch_failed", "fault", "crashed",
/// "timeout", "error", "nondeterministic".
const char* outcome_name(Outcome outcome);
/// Inverse of outcome_name; throws std::invalid_argument.
Outcome parse_outcome(const std::string& text);
/// True for outcomes that are the kernel's fault (a counterexample).
bool is_kernel_failure(Outcome outcome);

/// What to run.
struct CaseRequest {
  std::string registry = "builtin";  ///< "builtin", "planted", "plugin" or "sim"
  std::string variant;               ///< variant name within the spec's family
  gen::CaseSpec spec;                ///< the case
  std::string artifact;              ///< when non-empty: write the failure artefact here
  std::string reproduce;             ///< reproduce value (spec JSON) stored in the artefact
  int ref_threads = 0;               ///< reference threads (0 = all cores)
  /// Run the kernel twice (same inputs, freshly poisoned outputs and guards) and compare the
  /// two outputs bit for bit (`verify --determinism-share` picks the cases; shrink steps and
  /// replays always check).
  bool check_determinism = true;
  /// When set: judge the attention output under this precision model instead of the
  /// variant's declaration (`pagecheck selftest` runs every planted bug also under
  /// PrecisionModel::loosest(), to show that no accepted declaration blinds the harness).
  std::optional<PrecisionModel> judge_precision;
};

/// What happened.
struct CaseResult {
  Outcome outcome = Outcome::kError;  ///< disposition
  std::string message;                ///< comparison summary, variant or CUDA message
  nlohmann::json comparison;          ///< AttentionComparison / CopyComparison as JSON
  double max_ratio = -1;              ///< attention: max error / tolerance (-1: n/a)
  double max_abs = -1;                ///< attention: max absolute error (-1: n/a)
  double device_ms = 0;               ///< kernel time (CUDA events)
  double reference_ms = 0;            ///< reference + tolerance + comparison time
  double total_ms = 0;                ///< whole case inside the runner
  bool restart = false;               ///< the runner's context is unusable: restart it
  std::string artifact;               ///< artefact written (empty: none)
  int runs = 0;                       ///< kernel runs made (2 when checked for determinism)

  bool failed() const { return is_kernel_failure(outcome); }
  /// "incorrect: 3 of 512 elements over tolerance; ..."
  std::string summary() const { return std::string(outcome_name(outcome)) + ": " + message; }
};

void to_json(nlohmann::json& j, const CaseRequest& r);
void from_json(const nlohmann::json& j, CaseRequest& r);
void to_json(nlohmann::json& j, const CaseResult& r);
void from_json(const nlohmann::json& j, CaseResult& r);

}  // namespace pagecheck::verify::check
