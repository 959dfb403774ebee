/// One case end to end: materialize, run the variant, run the reference, compare, artefact.
#include "pagecheck/verify/check/case_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/check/artifact.h"
#include "pagecheck/verify/check/compare.h"
#include "pagecheck/verify/check/determinism.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::check {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Maps the device-side outcome; returns true when the outputs are worth comparing. `run`
/// prefixes the message of a failing determinism re-run ("second run: ").
bool device_outcome(const DeviceRunOutcome& d, CaseResult& r, const char* run = "") {
  r.device_ms += d.elapsed_ms;
  switch (d.disposition) {
    case LaunchDisposition::kLaunched:
      break;
    case LaunchDisposition::kNotSupported:
      r.outcome = Outcome::kNotSupported;
      r.message = std::string(run) + "variant refused the problem: " + d.message;
      return false;
    case LaunchDisposition::kInvalid:
      r.outcome = Outcome::kInvalid;
      r.message = std::string(run) + "variant called valid arguments invalid: " + d.message;
      return false;
    case LaunchDisposition::kLaunchFailed:
      r.outcome = d.sticky_error ? Outcome::kFault : Outcome::kLaunchFailed;
      r.message = run + d.message;
      r.restart = d.sticky_error;
      return false;
  }
  if (d.sticky_error) {
    r.outcome = Outcome::kFault;
    r.message = run + d.message;
    r.restart = true;
    return false;
  }
  return true;
}

constexpr const char* kSecondRun = "second run: ";

/// Adds a guard-zone violation to an otherwise finished comparison.
void check_guards(const DeviceRunOutcome& d, CaseResult& r, const char* run = "") {
  if (d.guards_intact) return;
  r.outcome = Outcome::kIncorrect;
  r.message = std::string(run) + "guard zone overwritten: " + d.guard_report +
              (r.message.empty() ? "" : "; " + r.message);
}

/// Folds the bit-for-bit comparison of the two runs into a finished comparison: a difference
/// makes a passing case `nondeterministic` (and is noted on an already failing one).
void check_runs_agree(const CopyComparison& runs, CaseResult& r) {
  if (r.comparison.is_object()) r.comparison["determinism"] = runs;
  if (runs.passed()) return;
  if (r.outcome == Outcome::kPassed) {
    r.outcome = Outcome::kNondeterministic;
    r.message = describe_runs(runs) + "; run 1 against the reference: " + r.message;
  } else {
    r.message += "; also " + describe_runs(runs);
  }
}

/// A second run of a variant that declares nondeterminism fails against the reference.
void second_run_incorrect(const std::string& description, CaseResult& r) {
  if (r.outcome != Outcome::kPassed) return;
  r.outcome = Outcome::kIncorrect;
  r.message = kSecondRun + description;
}

struct Attempt {
  const CaseRequest& request;
  const BackendVariant& variant;
  CaseBackend& backend;
  const ToleranceModel& model;
};

/// The attention tolerance of `problem` for the variant: the one place a case's bound is
/// computed, under the run's model constants and the variant's declared precision.
std::vector<double> tolerance_for(const Attempt& a, const ref::PagedAttentionProblem& problem,
                                  const ref::PagedAttentionResult& reference) {
  ToleranceModel model = a.model;
  model.precision =
      a.request.judge_precision ? *a.request.judge_precision : from_abi(a.variant.caps.precision);
  return attention_tolerance(problem, reference, model, a.request.ref_threads);
}

/// One attention output judged: the tolerance comparison over every row that attends to
/// something, and the rows of context-0 sequences against the variant's declaration.
struct AttentionVerdict {
  AttentionComparison rows;                ///< against the reference, within the tolerance
  std::optional<CopyComparison> context0;  ///< the context-0 rows, when the batch has some
  bool passed() const { return rows.passed() && (!context0 || context0->passed()); }
  std::string describe() const {
    std::string text = rows.describe();
    if (context0) text += "; context-0 rows: " + context0->describe();
    return text;
  }
  nlohmann::json json() const {
    nlohmann::json j = rows;
    if (context0) j["context0"] = *context0;
    return j;
  }
};

AttentionVerdict judge_attention(const Attempt& a, const ref::PagedAttentionProblem& problem,
                                 const ref::PagedAttentionResult& reference,
                                 const std::vector<double>& tol,
                                 const std::vector<std::byte>& out) {
  AttentionVerdict v;
  if (!has_context0_rows(problem)) {
    v.rows = compare_attention(problem, reference, tol, out);
    return v;
  }
  v.context0 = compare_context0_rows(problem, a.variant.caps.context0, out);
  v.rows = compare_attention(problem, reference, tol,
                             with_reference_context0_rows(problem, reference, out));
  return v;
}

CaseResult run_attention(const Attempt& a, const ref::PagedAttentionProblem& problem) {
  CaseResult r;
  const auto& spec = std::get<gen::AttentionSpec>(a.request.spec);
  const ref::TokenLayout layout = gen::out_layout(spec);
  const AttentionRun run = a.backend.run_attention(a.variant, problem, layout, 0);
  r.runs = 1;
  bool compare = device_outcome(run.outcome, r);
  // The determinism re-run: the same problem uploaded again into fresh, freshly poisoned
  // outputs and guards (never the first run's outputs).
  AttentionRun again;
  if (compare && a.request.check_determinism) {
    again = a.backend.run_attention(a.variant, problem, layout, 1);
    r.runs = 2;
    compare = device_outcome(again.outcome, r, kSecondRun);
  }
  ref::PagedAttentionResult reference;
  std::vector<double> tol;
  const auto ref_start = Clock::now();
  if (compare || !a.request.artifact.empty()) {
    reference = ref::paged_attention(problem, {a.request.ref_threads});
    tol = tolerance_for(a, problem, reference);
  }
  bool runs_differ = false;
  if (compare) {
    const AttentionVerdict c = judge_attention(a, problem, reference, tol, run.out);
    r.outcome = c.passed() ? Outcome::kPassed : Outcome::kIncorrect;
    r.message = c.describe();
    r.comparison = c.json();
    r.max_ratio = c.rows.max_ratio;
    r.max_abs = c.rows.metrics.max_abs;
    if (r.runs == 2 && a.variant.deterministic()) {
      const CopyComparison runs = compare_attention_runs(problem, run.out, again.out);
      runs_differ = !runs.passed();
      check_runs_agree(runs, r);
    } else if (r.runs == 2) {
      const AttentionVerdict c2 = judge_attention(a, problem, reference, tol, again.out);
      r.max_ratio = std::max(r.max_ratio, c2.rows.max_ratio);
      r.max_abs = std::max(r.max_abs, c2.rows.metrics.max_abs);
      if (!c2.passed()) second_run_incorrect(c2.describe(), r);
    }
    check_guards(run.outcome, r);
    if (r.runs == 2) check_guards(again.outcome, r, kSecondRun);
  }
  r.reference_ms = ms_since(ref_start);
  if (!a.request.artifact.empty()) {
    ArtifactContents contents;
    contents.request = &a.request;
    contents.result = &r;
    contents.attention = &problem;
    contents.reference = &reference;
    contents.tolerance = &tol;
    contents.actual_out = &run.out;
    if (runs_differ) contents.second_run_out = &again.out;
    write_artifact(a.request.artifact, contents);
    r.artifact = a.request.artifact;
  }
  return r;
}

CaseResult run_copy(const Attempt& a, ref::CacheCopyProblem problem) {
  CaseResult r;
  const bool gather = gen::family_of(a.request.spec) == PC_FAMILY_GATHER_CACHED_KV;
  const auto launch = [&](int run) {
    return gather ? a.backend.run_gather(a.variant, problem, run)
                  : a.backend.run_reshape(a.variant, problem, run);
  };
  const CopyRun run = launch(0);
  r.runs = 1;
  bool compare = device_outcome(run.outcome, r);
  CopyRun again;
  std::optional<CopyComparison> runs;
  if (compare && a.request.check_determinism) {
    again = launch(1);
    r.runs = 2;
    compare = device_outcome(again.outcome, r, kSecondRun);
    if (compare && a.variant.deterministic()) {
      runs = compare_copy_runs(problem, gather, run, again);
      // Kept only for the artefact of a differing ordinary case: free a multi-GiB cache
      // before the reference runs.
      if (runs->passed() || gen::is_large(a.request.spec)) {
        again.first = std::vector<std::byte>();
        again.second = std::vector<std::byte>();
      }
    }
  }
  const auto ref_start = Clock::now();
  // The inputs are kept only for an artefact of an ordinary case; a multi-GiB cache is turned
  // into the expected result in place.
  const bool keep_inputs = !a.request.artifact.empty() && !gen::is_large(a.request.spec);
  ref::CacheCopyProblem inputs;
  if (keep_inputs) inputs = problem;
  ref::CacheCopyProblem expected = std::move(problem);
  if (gather) {
    ref::gather_cached_kv(expected);
  } else {
    ref::reshape_and_cache(expected);
  }
  if (compare) {
    const CopyComparison c = compare_copy(expected, gather, run.first, run.second);
    r.outcome = c.passed() ? Outcome::kPassed : Outcome::kIncorrect;
    r.message = c.describe();
    r.comparison = c;
    if (runs) {
      check_runs_agree(*runs, r);
    } else if (r.runs == 2) {
      const CopyComparison c2 = compare_copy(expected, gather, again.first, again.second);
      if (!c2.passed()) second_run_incorrect(c2.describe(), r);
    }
    check_guards(run.outcome, r);
    if (r.runs == 2) check_guards(again.outcome, r, kSecondRun);
  }
  r.reference_ms = ms_since(ref_start);
  if (!a.request.artifact.empty()) {
    ArtifactContents contents;
    contents.request = &a.request;
    contents.result = &r;
    contents.copy_inputs = keep_inputs ? &inputs : &expected;
    contents.copy_expected = &expected;
    contents.actual_first = &run.first;
    contents.actual_second = &run.second;
    if (runs && !runs->passed()) {
      contents.second_run_first = &again.first;
      contents.second_run_second = &again.second;
    }
    write_artifact(a.request.artifact, contents);
    r.artifact = a.request.artifact;
  }
  return r;
}

/// Runs a request whose problem is given (materialized or loaded from an artefact).
template <typename Problem>
CaseResult run_with_problem(const std::vector<CaseBackend*>& backends, const CaseRequest& request,
                            const ToleranceModel& model, Problem problem) {
  CaseBackend* owner = nullptr;
  const pc_family family = gen::family_of(request.spec);
  const BackendVariant* v =
      find_variant(backends, request.registry, family, request.variant, &owner);
  if (v == nullptr) {
    CaseResult r;
    r.outcome = Outcome::kError;
    r.message = "no " + std::string(family_name(family)) + " variant '" + request.variant +
                "' in registry '" + request.registry + "'";
    return r;
  }
  const Attempt attempt{request, *v, *owner, model};
  if constexpr (std::is_same_v<Problem, ref::PagedAttentionProblem>) {
    return run_attention(attempt, problem);
  } else {
    return run_copy(attempt, std::move(problem));
  }
}

CaseResult error_result(const char* stage, const std::exception& e) {
  CaseResult r;
  r.outcome = Outcome::kError;
  r.message = std::string(stage) + ": " + e.what();
  return r;
}

}  // namespace

const BackendVariant* find_variant(const std::vector<CaseBackend*>& backends,
                                   const std::string& registry, pc_family family,
                                   const std::string& name, CaseBackend** owner) {
  for (CaseBackend* b : backends) {
    for (const BackendVariant& v : b->variants()) {
      if (v.registry == registry && v.caps.family == family && v.caps.name == name) {
        if (owner != nullptr) *owner = b;
        return &v;
      }
    }
  }
  return nullptr;
}

CaseResult run_case(const std::vector<CaseBackend*>& backends, const CaseRequest& request,
                    const ToleranceModel& model) {
  const auto start = Clock::now();
  CaseResult r;
  try {
    if (const auto* a = std::get_if<gen::AttentionSpec>(&request.spec)) {
      r = run_with_problem(backends, request, model, gen::materialize(*a));
    } else {
      r = run_with_problem(backends, request, model,
                           gen::materialize(std::get<gen::CopySpec>(request.spec)));
    }
  } catch (const std::exception& e) {
    r = error_result("harness", e);
  }
  r.total_ms = ms_since(start);
  return r;
}

CaseResult replay_artifact(const std::vector<CaseBackend*>& backends, const std::string& path,
                           int ref_threads, const ToleranceModel& model) {
  const LoadedArtifact a = read_artifact(path);  // bad files throw (exit 2)
  const auto start = Clock::now();
  CaseRequest request;
  request.registry = a.registry;
  request.variant = a.variant;
  request.spec = a.spec;
  request.ref_threads = ref_threads;
  CaseResult r;
  try {
    r = a.attention ? run_with_problem(backends, request, model, *a.attention)
                    : run_with_problem(backends, request, model, *a.copy);
  } catch (const std::exception& e) {
    r = error_result("harness", e);
  }
  r.total_ms = ms_since(start);
  return r;
}

}  // namespace pagecheck::verify::check
