/// Shrinking a variant's first failure under RapidCheck, and replaying reproduce strings.
#include <filesystem>

#include "verifier_internal.h"

namespace pagecheck::verify::check {
namespace detail {

FailureInfo shrink_failure(const Target& t, const CaseParams& params, const gen::CaseSpec& original,
                           const CaseResult& original_result, CaseExecutor& executor,
                           const VerifyOptions& o) {
  const auto start = Clock::now();
  const std::string id = rc_test_id(t, params);
  const rc::Gen<gen::CaseSpec> generator = case_generator(t, params);
  bool have_last = false, budget_hit = false;
  gen::CaseSpec last_spec = original;
  CaseResult last_result = original_result;
  int steps = 0;
  const auto property = rc::detail::toProperty([&] {
    const gen::CaseSpec spec = *generator;
    if (seconds_since(start) > o.shrink_budget_s) {
      budget_hit = true;  // passing every further candidate ends the shrink quickly
      return;
    }
    ++steps;
    const CaseResult r = executor.run(make_request(t, spec, o));
    if (r.failed()) {
      have_last = true;
      last_spec = spec;
      last_result = r;
      RC_FAIL(r.summary());
    }
  });
  SilentListener listener;
  const rc::detail::TestResult result =
      rc::detail::checkProperty(property, metadata(id), test_params(params), listener, {});
  FailureInfo f;
  f.case_index = params.index;
  f.rc_id = id;
  f.original_summary = gen::summary(original);
  rc::detail::FailureResult failure;
  if (result.match(failure)) {
    f.reproduce = reproduce_string(id, failure.reproduce);
  } else {
    f.reproduced = false;  // passed when re-run: a flaky failure; report the original
  }
  if (!have_last) {
    last_spec = original;
    last_result = original_result;
  }
  f.shrink_steps = steps;
  f.shrink_budget_hit = budget_hit;
  f.shrink_seconds = seconds_since(start);
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
      last_result.message += " (artefact not written: " + again.summary() + ")";
    }
  }
  f.spec = gen::spec_to_json(last_spec);
  f.spec_text = gen::describe(last_spec);
  f.shrunk_size = gen::spec_size(last_spec);
  f.outcome = last_result.outcome;
  f.message = last_result.message;
  f.comparison = last_result.comparison;
  return f;
}

}  // namespace detail

using namespace detail;

RunReport replay_reproduce(const std::string& rc_params, const std::vector<Target>& targets,
                           const VerifyOptions& o, const ExecutorFactory& make_executor) {
  rc::detail::Configuration config;
  try {
    config = rc::detail::configFromString(rc_params);
  } catch (const std::exception& e) {
    throw std::invalid_argument("RC_PARAMS: " + std::string(e.what()));
  }
  if (config.reproduce.empty()) throw std::invalid_argument("RC_PARAMS holds no reproduce=…");
  const auto start = Clock::now();
  RunReport report;
  report.seed = o.seed;
  report.cases = 1;
  report.shards = {0};
  report.device = o.device;
  std::unique_ptr<CaseExecutor> executor = make_executor(0);
  for (const auto& [id, repro] : config.reproduce) {
    // "<registry>:<family>/<variant>/size=S/large=L"
    const std::size_t large_at = id.rfind("/large=");
    const std::size_t size_at = id.rfind("/size=");
    if (large_at == std::string::npos || size_at == std::string::npos || size_at > large_at) {
      throw std::invalid_argument("RC_PARAMS: test id '" + id + "' is not a pagecheck case id");
    }
    const std::string target_id = id.substr(0, size_at);
    const auto it = std::find_if(targets.begin(), targets.end(),
                                 [&](const Target& t) { return t.id() == target_id; });
    if (it == targets.end()) {
      throw std::invalid_argument("RC_PARAMS: no variant '" + target_id + "' to replay");
    }
    CaseParams params;
    params.index = -1;
    params.size = std::stoi(id.substr(size_at + 6, large_at - size_at - 6));
    params.large = id.substr(large_at + 7) == "1";
    const rc::Gen<gen::CaseSpec> generator = case_generator(*it, params);
    VariantReport v = empty_report(*it, o);
    v.planned = 1;
    gen::CaseSpec last;
    CaseResult last_result;
    const auto property = rc::detail::toProperty([&] {
      last = *generator;
      last_result = executor->run(make_request(*it, last, o));
      if (last_result.failed()) RC_FAIL(last_result.summary());
    });
    SilentListener listener;
    const auto case_start = Clock::now();
    rc::detail::checkProperty(property, metadata(id), test_params(params), listener,
                              config.reproduce);
    TargetState st;
    st.report = v;
    st.params = {params};
    st.specs = {last};
    st.start = case_start;
    record(st, 0, last_result);
    if (last_result.failed()) {
      FailureInfo f;
      f.rc_id = id;
      f.reproduce = reproduce_string(id, repro);
      f.spec = gen::spec_to_json(last);
      f.spec_text = gen::describe(last);
      f.original_summary = gen::summary(last);
      f.shrunk_size = gen::spec_size(last);
      f.outcome = last_result.outcome;
      f.message = last_result.message;
      f.comparison = last_result.comparison;
      f.seconds_to_find = seconds_since(case_start);
      st.report.failure = f;
    } else {
      report.notes.push_back(id + ": the reproduced case passed now");
    }
    report.variants.push_back(st.report);
  }
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace pagecheck::verify::check
