/// Outcome names and the JSON form of requests and results.
#include "pagecheck/verify/check/case_result.h"

#include <cmath>
#include <stdexcept>

namespace pagecheck::verify::check {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kIncorrect:
      return "incorrect";
    case Outcome::kNotSupported:
      return "not_supported";
    case Outcome::kInvalid:
      return "invalid";
    case Outcome::kLaunchFailed:
      return "launch_failed";
    case Outcome::kFault:
      return "fault";
    case Outcome::kCrashed:
      return "crashed";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kError:
      return "error";
    case Outcome::kNondeterministic:
      return "nondeterministic";
  }
  return "error";
}

Outcome parse_outcome(const std::string& text) {
  for (int i = 0; i <= static_cast<int>(Outcome::kNondeterministic); ++i) {
    if (text == outcome_name(static_cast<Outcome>(i))) return static_cast<Outcome>(i);
  }
  throw std::invalid_argument("unknown case outcome '" + text + "'");
}

bool is_kernel_failure(Outcome o) {
  switch (o) {
    case Outcome::kIncorrect:
    case Outcome::kInvalid:
    case Outcome::kLaunchFailed:
    case Outcome::kFault:
    case Outcome::kCrashed:
    case Outcome::kTimeout:
    case Outcome::kNondeterministic:
      return true;
    default:
      return false;
  }
}

void to_json(nlohmann::json& j, const CaseRequest& r) {
  j = nlohmann::json{{"registry", r.registry},
                     {"variant", r.variant},
                     {"spec", gen::spec_to_json(r.spec)},
                     {"artifact", r.artifact},
                     {"reproduce", r.reproduce},
                     {"ref_threads", r.ref_threads},
                     {"check_determinism", r.check_determinism},
                     {"judge_precision",
                      r.judge_precision ? nlohmann::json(*r.judge_precision) : nlohmann::json()}};
}

void from_json(const nlohmann::json& j, CaseRequest& r) {
  r.registry = j.at("registry").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.spec = gen::spec_from_json(j.at("spec"));
  r.artifact = j.value("artifact", std::string());
  r.reproduce = j.value("reproduce", std::string());
  r.ref_threads = j.value("ref_threads", 0);
  r.check_determinism = j.value("check_determinism", true);
  if (j.contains("judge_precision") && !j.at("judge_precision").is_null()) {
    r.judge_precision = j.at("judge_precision").get<PrecisionModel>();
  }
}

void to_json(nlohmann::json& j, const CaseResult& r) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf"); };
  j = nlohmann::json{{"outcome", outcome_name(r.outcome)},
                     {"message", r.message},
                     {"comparison", r.comparison},
                     {"max_ratio", num(r.max_ratio)},
                     {"max_abs", num(r.max_abs)},
                     {"device_ms", r.device_ms},
                     {"reference_ms", r.reference_ms},
                     {"total_ms", r.total_ms},
                     {"restart", r.restart},
                     {"artifact", r.artifact},
                     {"runs", r.runs}};
}

void from_json(const nlohmann::json& j, CaseResult& r) {
  auto num = [](const nlohmann::json& v) { return v.is_string() ? INFINITY : v.get<double>(); };
  r.outcome = parse_outcome(j.at("outcome").get<std::string>());
  r.message = j.value("message", std::string());
  r.comparison = j.value("comparison", nlohmann::json());
  r.max_ratio = num(j.value("max_ratio", nlohmann::json(-1.0)));
  r.max_abs = num(j.value("max_abs", nlohmann::json(-1.0)));
  r.device_ms = j.value("device_ms", 0.0);
  r.reference_ms = j.value("reference_ms", 0.0);
  r.total_ms = j.value("total_ms", 0.0);
  r.restart = j.value("restart", false);
  r.artifact = j.value("artifact", std::string());
  r.runs = j.value("runs", 0);
}

}  // namespace pagecheck::verify::check
