/// pagecheck.cases and the engine of pagecheck.verify: the generators' cases of a declared
/// variant as numpy arrays, and a verification run of a Python callable through the CLI's own
/// verifier (case generation, comparison, report text, RapidCheck shrinking: verify/check).
#include <Python.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <pybind11/stl.h>

#include "bindings.h"
#include "caps_args.h"
#include "case_arrays.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/materialize.h"
#include "python_backend.h"

namespace pagecheck::python {
namespace {

namespace check = verify::check;
namespace gen = verify::gen;

/// A Python object from JSON.
py::object from_json(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

/// A non-negative integer argument `name` (bool refused).
int64_t count_argument(const py::handle& value, const char* name, int64_t minimum) {
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
    throw py::type_error(std::string(name) + ": expected an int, got " +
                         py::repr(value).cast<std::string>());
  }
  const int64_t v = value.cast<int64_t>();
  if (v < minimum) {
    throw py::value_error(std::string(name) + ": must be at least " + std::to_string(minimum) +
                          ", got " + std::to_string(v));
  }
  return v;
}

/// The spec as Python sees it: {"index", "spec" (dict), "text" (describe), "summary",
/// "family", "inputs" (case_arrays.h)}.
py::dict case_dict(int64_t index, const gen::CaseSpec& spec) {
  py::dict d;
  d["index"] = index;
  d["spec"] = from_json(gen::spec_to_json(spec));
  d["text"] = gen::describe(spec);
  d["summary"] = gen::summary(spec);
  d["family"] = family_name(gen::family_of(spec));
  if (const auto* a = std::get_if<gen::AttentionSpec>(&spec)) {
    d["inputs"] = attention_arrays(gen::materialize(*a), gen::out_layout(*a));
  } else {
    const auto& c = std::get<gen::CopySpec>(spec);
    d["inputs"] = copy_arrays(gen::materialize(c), c.family == PC_FAMILY_GATHER_CACHED_KV);
  }
  return d;
}

py::list cases(const py::handle& family, const py::handle& caps, const py::handle& seed,
               const py::handle& n) {
  const check::Target target{"python", read_caps(family, caps, "python")};
  const auto count = count_argument(n, "n", 0);
  const auto run_seed = static_cast<uint64_t>(count_argument(seed, "seed", 0));
  py::list out;
  for (int64_t i = 0; i < count; ++i) {
    const check::CaseParams params =
        check::case_params(target, run_seed, static_cast<int>(count), i);
    out.append(case_dict(i, check::generate_case(target, params)));
  }
  return out;
}

/// The failure of a report as a dict (None when none).
py::object failure_dict(const check::RunReport& report) {
  const check::VariantReport& v = report.variants.at(0);
  if (!v.failure) return py::none();
  const check::FailureInfo& f = *v.failure;
  std::ostringstream block;
  check::print_counterexample(block, v, report);
  py::dict d;
  d["case_index"] = f.case_index;
  d["spec"] = from_json(f.spec);
  d["spec_text"] = f.spec_text;
  d["original_summary"] = f.original_summary;
  d["outcome"] = check::outcome_name(f.outcome);
  d["message"] = f.message;
  d["comparison"] = from_json(f.comparison);
  d["reproduce"] = f.reproduce;
  d["shrink_steps"] = f.shrink_steps;
  d["shrink_seconds"] = f.shrink_seconds;
  d["shrunk_size"] = f.shrunk_size;
  d["shrink_budget_hit"] = f.shrink_budget_hit;
  d["reproduced"] = f.reproduced;
  d["counterexample"] = block.str();
  return d;
}

/// Runs the verification of `runner` (python_backend.h) and returns the report as a dict:
/// ok, exit_code, summary (the CLI's table), counts, errors, failure (failure_dict), report
/// (the JSON report), error (the runner's first exception or None).
py::dict verify_runner(const py::object& runner, const py::handle& family, const py::handle& caps,
                       const py::handle& cases, const py::handle& seed, const py::handle& spec,
                       double shrink_seconds, double determinism_share, const std::string& name) {
  if (!PyCallable_Check(runner.ptr())) throw py::type_error("fn: expected a callable");
  check::Target target{"python", read_caps(family, caps, name)};
  check::VerifyOptions o;
  o.cases = static_cast<int>(count_argument(cases, "cases", 1));
  o.seed = static_cast<uint64_t>(count_argument(seed, "seed", 0));
  o.jobs = 1;
  if (!(shrink_seconds >= 0)) throw py::value_error("shrink_seconds: must be >= 0");
  o.shrink_budget_s = shrink_seconds;
  if (!(determinism_share >= 0 && determinism_share <= 1)) {
    throw py::value_error("determinism_share: must lie in [0, 1]");
  }
  o.determinism_share = determinism_share;
  o.device = "Python callable";
  std::optional<gen::CaseSpec> replay;
  if (!spec.is_none()) {
    std::string text;
    if (py::isinstance<py::dict>(spec)) {
      text = py::module_::import("json").attr("dumps")(spec).cast<std::string>();
    } else if (py::isinstance<py::str>(spec) &&
               spec.cast<std::string>().find('{') != std::string::npos) {
      text = spec.cast<std::string>();
    } else {
      throw py::type_error("spec: expected a spec dict or its JSON text (a failure's reproduce)");
    }
    try {
      replay = check::parse_reproduce_spec(text, "spec");
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
    if (gen::family_of(*replay) != target.caps.family) {
      throw py::value_error(std::string("spec: a ") + family_name(gen::family_of(*replay)) +
                            " case, but family is " + family_name(target.caps.family));
    }
  }
  auto backend = std::make_unique<PythonBackend>(target.caps, runner);
  const check::ExecutorFactory factory = [&backend](int) {
    return std::make_unique<check::InlineExecutor>(std::vector<check::CaseBackend*>{backend.get()});
  };
  bool interrupted = false;
  o.stop = [&interrupted] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) interrupted = true;
    return interrupted;
  };
  check::RunReport report;
  {
    py::gil_scoped_release released;
    report = replay ? check::replay_spec(*replay, {target}, o, factory)
                    : check::run_verification({target}, o, factory);
  }
  if (interrupted) throw py::error_already_set();
  const check::VariantReport& v = report.variants.at(0);
  std::ostringstream summary;
  check::print_summary(summary, report);
  py::dict d;
  d["ok"] = v.ok();
  d["exit_code"] = report.exit_code();
  d["summary"] = summary.str();
  d["run"] = v.run;
  d["passed"] = v.passed;
  d["failed"] = v.failed;
  d["errors"] = v.error_messages;
  d["failure"] = failure_dict(report);
  d["report"] = from_json(nlohmann::json(report));
  d["error"] = backend->first_error();
  return d;
}

}  // namespace

void bind_verify(py::module_& m) {
  using namespace pybind11::literals;
  m.def("cases", &cases, "family"_a, "caps"_a, py::kw_only(), "seed"_a, "n"_a,
        "The generators' cases of a declared variant (see pagecheck.cases).");
  m.def("verify_runner", &verify_runner, "runner"_a, "family"_a, "caps"_a, py::kw_only(), "cases"_a,
        "seed"_a, "spec"_a, "shrink_seconds"_a, "determinism_share"_a, "name"_a,
        "Verifies a runner (see pagecheck.verify).");
}

}  // namespace pagecheck::python
