/// Reproducing a counterexample from its spec JSON (`pagecheck verify --reproduce-spec`): the
/// JSON a report prints and stores is the whole case (shapes, tables, strides, content seed).
#include <fstream>
#include <sstream>

#include "verifier_internal.h"

namespace pagecheck::verify::check {

using namespace detail;

gen::CaseSpec parse_reproduce_spec(const std::string& argument, const std::string& what) {
  const std::size_t first = argument.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw std::invalid_argument(what + ": empty");
  std::string text = argument;
  std::string source = "the inline JSON";
  if (argument[first] != '{') {
    std::ifstream in(argument);
    if (!in) throw std::invalid_argument(what + ": cannot read '" + argument + "'");
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
    source = "'" + argument + "'";
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(what + ": " + source + " is not JSON: " + e.what());
  }
  if (!j.is_object()) {
    throw std::invalid_argument(what + ": " + source + " is not a spec (a JSON object)");
  }
  try {
    gen::CaseSpec spec = gen::spec_from_json(j);
    gen::validate(spec);
    return spec;
  } catch (const std::exception& e) {
    throw std::invalid_argument(what + ": " + source + ": " + e.what());
  }
}

RunReport replay_spec(const gen::CaseSpec& spec, const std::vector<Target>& targets,
                      const VerifyOptions& o, const ExecutorFactory& make_executor) {
  const pc_family family = gen::family_of(spec);
  const auto start = Clock::now();
  RunReport report;
  report.seed = o.seed;
  report.cases = 1;
  report.shards = {0};
  report.device = o.device;
  std::unique_ptr<CaseExecutor> executor;
  for (const Target& t : targets) {
    if (t.caps.family != family) continue;
    if (!executor) executor = make_executor(0);
    TargetState st;
    st.caps = t.caps;
    st.report = empty_report(t, o);
    st.report.planned = 1;
    st.params = {CaseParams{}};
    st.params[0].index = -1;
    st.specs = {spec};
    st.start = Clock::now();
    const CaseResult r = executor->run(make_request(t, spec, o));
    record(st, 0, r);
    if (r.failed()) {
      FailureInfo f;
      f.case_index = -1;
      f.original_summary = gen::summary(spec);
      f.seconds_to_find = seconds_since(st.start);
      describe_failure(f, spec, r);
      st.report.failure = f;
    }
    report.variants.push_back(st.report);
  }
  if (report.variants.empty()) {
    throw std::invalid_argument(std::string("no variant of family ") + family_name(family) +
                                " to replay the spec on");
  }
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace pagecheck::verify::check
