#pragma once
/// Internals shared by the verifier's run, shrink and replay code (not installed).
#include <rapidcheck.h>

#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "pagecheck/registry.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify::check::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The request for a case; `check_determinism` says whether it runs twice (see determinism.h).
inline CaseRequest make_request(const Target& t, const gen::CaseSpec& spec, const VerifyOptions& o,
                                bool check_determinism = true) {
  CaseRequest r;
  r.registry = t.registry;
  r.variant = t.caps.name;
  r.spec = spec;
  r.ref_threads = o.ref_threads;
  r.check_determinism = check_determinism;
  r.judge_precision = o.judge_precision;
  return r;
}

/// Per target bookkeeping during a run.
struct TargetState {
  gen::VariantCaps caps;  ///< the target's caps (the tags are counted under them)
  VariantReport report;
  std::vector<CaseParams> params;
  std::vector<gen::CaseSpec> specs;
  std::mutex mutex;
  int64_t first_fail = std::numeric_limits<int64_t>::max();
  std::size_t first_fail_slot = 0;
  CaseResult first_fail_result;
  bool started = false;
  Clock::time_point start;
  double seconds_to_find = 0;
};

inline void record(TargetState& st, std::size_t slot, const CaseResult& r) {
  VariantReport& v = st.report;
  ++v.run;
  ++v.outcomes[outcome_name(r.outcome)];
  if (r.runs >= 2) ++v.runs_twice;
  v.seconds += r.total_ms / 1000.0;
  const gen::CaseSpec& spec = st.specs[slot];
  const gen::Regime regime = std::visit([](const auto& s) { return s.regime; }, spec);
  ++v.regimes[gen::regime_name(regime)];
  for (const auto& tag : gen::edge_tags(spec, st.caps)) ++v.tags[tag];
  switch (r.outcome) {
    case Outcome::kPassed:
      ++v.passed;
      v.max_ratio = std::max(v.max_ratio, r.max_ratio);
      v.max_abs = std::max(v.max_abs, r.max_abs);
      break;
    case Outcome::kNotSupported:
      ++v.not_supported;
      break;
    case Outcome::kError:
      ++v.errors;
      if (v.error_messages.size() < 5) {
        v.error_messages.push_back("case " + std::to_string(st.params[slot].index) + ": " +
                                   r.message);
      }
      break;
    default:
      ++v.failed;
      if (st.params[slot].index < st.first_fail) {
        st.first_fail = st.params[slot].index;
        st.first_fail_slot = slot;
        st.first_fail_result = r;
        st.seconds_to_find = seconds_since(st.start);
      }
  }
}

/// The counterexample fields of `f` from a failing spec and its result: the spec (JSON, text,
/// size), the reproduce value (the spec's one-line JSON, for `verify --reproduce-spec`), the
/// outcome and the comparison.
inline void describe_failure(FailureInfo& f, const gen::CaseSpec& spec, const CaseResult& r) {
  f.spec = gen::spec_to_json(spec);
  f.reproduce = f.spec.dump();
  f.spec_text = gen::describe(spec);
  f.shrunk_size = gen::spec_size(spec);
  f.outcome = r.outcome;
  f.message = r.message;
  f.comparison = r.comparison;
}

/// Empty when the target's precision declaration is valid and no looser than
/// PrecisionModel::loosest() (attention only); otherwise why the variant is refused.
inline std::string precision_refusal(const gen::VariantCaps& caps) {
  if (caps.family != PC_FAMILY_PAGED_ATTENTION) return {};
  try {
    from_abi(caps.precision).check_accepted();
    return {};
  } catch (const std::exception& e) {
    return std::string("precision declaration refused (no case run): ") + e.what();
  }
}

/// The declaration of an attention target; empty for copies and invalid declarations
/// (precision_refusal says why).
inline std::optional<PrecisionModel> declared_precision(const gen::VariantCaps& caps) {
  if (caps.family != PC_FAMILY_PAGED_ATTENTION) return std::nullopt;
  try {
    return from_abi(caps.precision);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

inline VariantReport empty_report(const Target& t, const VerifyOptions& o) {
  VariantReport v;
  v.registry = t.registry;
  v.family = family_name(t.caps.family);
  v.variant = t.caps.name;
  v.precision = o.judge_precision && t.caps.family == PC_FAMILY_PAGED_ATTENTION
                    ? o.judge_precision
                    : declared_precision(t.caps);
  v.possible_tags = gen::all_edge_tags(t.caps);
  v.shards = {o.shard.index};
  return v;
}

/// Shrinks a failing case: the case's RapidCheck shrink tree (its generator at its seed and
/// size) searched with rc::shrinkable::findLocalMin; every step is one case on `executor`,
/// within o.shrink_budget_s seconds.
FailureInfo shrink_failure(const Target& t, const CaseParams& params, const gen::CaseSpec& original,
                           const CaseResult& original_result, CaseExecutor& executor,
                           const VerifyOptions& o);

}  // namespace pagecheck::verify::check::detail
