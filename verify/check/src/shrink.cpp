/// Shrinking a variant's first failure with RapidCheck's public API: the case's shrink tree
/// (its generator at the case's seed and size), then the shrunk spec's own shrink tree
/// (gen::shrinkable_spec), each searched by rc::shrinkable::findLocalMin; every candidate is
/// one case on the executor, within the shrink budget.
// GCC 12 warns, wrongly, that findLocalMin's rc::Maybe<Shrinkable> may be used uninitialized
// (RapidCheck's header code, instantiated here).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <filesystem>
#include <set>

#include "pagecheck/verify/gen/spec_shrink.h"
#include "verifier_internal.h"

namespace pagecheck::verify::check::detail {

FailureInfo shrink_failure(const Target& t, const CaseParams& params, const gen::CaseSpec& original,
                           const CaseResult& original_result, CaseExecutor& executor,
                           const VerifyOptions& o) {
  const auto start = Clock::now();
  const rc::Shrinkable<gen::CaseSpec> root =
      case_generator(t, params)(rc::Random(params.rc_seed), params.size);
  FailureInfo f;
  f.case_index = params.index;
  f.rc_id = rc_test_id(t, params);
  f.original_summary = gen::summary(original);
  gen::CaseSpec last_spec = original;
  CaseResult last_result = original_result;
  bool budget_hit = false;
  int steps = 0;
  std::set<std::string> tried;  // a spec met again is not run again
  // Runs a candidate; true when it still fails (it becomes the counterexample so far).
  const auto still_fails = [&](const gen::CaseSpec& spec) {
    if (steps > 0 && seconds_since(start) > o.shrink_budget_s) {
      budget_hit = true;  // refusing every further candidate ends the search quickly
      return false;
    }
    if (!tried.insert(gen::spec_to_json(spec).dump()).second) return false;
    ++steps;
    const CaseResult r = executor.run(make_request(t, spec, o));
    if (!r.failed()) return false;
    last_spec = spec;
    last_result = r;
    return true;
  };
  // The first step (whatever the budget) re-runs the failing case itself: a pass means a
  // flaky failure (reported as found, not shrunk).
  f.reproduced = still_fails(root.value());
  // Then the generator's choices (shapes, sequences, tables, strides, regime), then the spec's
  // own fields (any sequence or token removed, contexts shortened, the table and pool
  // compacted); gen/spec_shrink.h says why both.
  if (f.reproduced) gen::shrink_case(root, still_fails);
  if (!f.reproduced) {
    last_spec = original;
    last_result = original_result;
  }
  f.shrink_steps = steps;
  f.shrink_budget_hit = budget_hit;
  f.shrink_seconds = seconds_since(start);
  describe_failure(f, last_spec, last_result);
  if (!o.artifact_dir.empty()) {
    CaseRequest request = make_request(t, last_spec, o);
    request.reproduce = f.reproduce;
    request.artifact = (std::filesystem::path(o.artifact_dir) /
                        (t.caps.name + "-case" + std::to_string(params.index) + ".h5"))
                           .string();
    const CaseResult again = executor.run(request);
    if (!again.artifact.empty()) {
      f.artifact = again.artifact;
    } else {
      f.message += " (artefact not written: " + again.summary() + ")";
    }
  }
  return f;
}

}  // namespace pagecheck::verify::check::detail
