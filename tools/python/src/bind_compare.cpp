/// ToleranceModel, AttentionComparison and compare_attention: a kernel's attention output
/// against the float64 reference within the derived tolerance (docs/tolerances.md), with the
/// same description text as the CLI.
#include <cstring>
#include <stdexcept>
#include <utility>

#include <pybind11/stl.h>

#include "array_args.h"
#include "array_out.h"
#include "bindings.h"
#include "case_arrays.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/tolerance.h"
#include "problem_args.h"

namespace pagecheck::python {
namespace {

/// What compare_attention returns: the comparison plus the tolerance it used.
struct ComparisonResult {
  verify::AttentionComparison comparison;  ///< the harness's comparison
  std::vector<double> tolerance;           ///< per-element tolerance [row, head, dim]
  std::vector<int64_t> shape;              ///< [num_query_tokens, num_heads, head_size]
  std::string model;                       ///< ToleranceModel::describe() of the model used
};

/// compare_attention's keywords beyond the problem's: reference_out, reference_lse, model,
/// num_threads (problem_args.h reads the problem's).
ComparisonResult compare_attention(const py::handle& query, const py::handle& key_cache,
                                   const py::handle& value_cache, const py::handle& block_table,
                                   const py::handle& context_lens, const py::handle& actual,
                                   const py::kwargs& kw) {
  const ref::PagedAttentionProblem p =
      attention_problem(query, key_cache, value_cache, block_table, context_lens, kw);
  const py::object reference_out = keyword(kw, "reference_out");
  const py::object reference_lse = keyword(kw, "reference_lse"), model = keyword(kw, "model");
  const py::object threads = keyword(kw, "num_threads");
  const int num_threads = threads.is_none() ? 0 : threads.cast<int>();
  const std::vector<std::byte> got =
      attention_output(actual, p, "actual", requested_dtype(keyword(kw, "dtype")));
  verify::ToleranceModel tolerance_model;
  if (!model.is_none()) {
    if (!py::isinstance<verify::ToleranceModel>(model)) {
      throw py::type_error("model: expected a pagecheck.ToleranceModel or None, got " +
                           py::repr(model).cast<std::string>());
    }
    tolerance_model = model.cast<verify::ToleranceModel>();
  }
  const bool have_reference = !reference_out.is_none();
  const bool have_lse = have_reference && !reference_lse.is_none();
  ComparisonResult result;
  result.shape = {p.query_layout.num_tokens, p.num_heads, p.head_size()};
  const std::vector<int64_t> lse_shape{p.query_layout.num_tokens, p.num_heads};
  const auto float64 = [](const py::handle& obj, const std::string& name) {
    const py::array given = to_numpy(obj, name);
    if (given.dtype().kind() != 'f' || given.dtype().itemsize() != 8) {
      throw py::type_error(name +
                           ": expected float64 (reference.paged_attention's result), "
                           "got dtype " +
                           py::str(given.dtype()).cast<std::string>());
    }
    return given;
  };
  std::vector<double> given_out, given_lse;
  if (have_reference) {
    given_out = read_float64(float64(reference_out, "reference_out"), "reference_out", result.shape,
                             "[num_query_tokens, num_heads, head_size]");
  }
  if (have_lse) {
    given_lse = read_float64(float64(reference_lse, "reference_lse"), "reference_lse", lse_shape,
                             "[num_query_tokens, num_heads]");
  }
  py::gil_scoped_release released;
  // The tolerance takes its magnitudes from the reference's lse: without reference_lse the
  // reference runs for it (and for out when reference_out is not given either).
  ref::PagedAttentionResult reference;
  if (!have_lse) reference = ref::paged_attention(p, ref::ReferenceOptions{num_threads});
  if (have_reference) reference.out = std::move(given_out);
  if (have_lse) {
    reference.num_rows = p.query_layout.num_tokens;
    reference.num_heads = p.num_heads;
    reference.head_size = p.head_size();
    reference.lse = std::move(given_lse);
  }
  try {
    result.tolerance = verify::attention_tolerance(p, reference, tolerance_model, num_threads);
  } catch (const std::runtime_error& e) {
    throw py::value_error(
        std::string(!have_reference ? "query, key_cache, value_cache: " : "reference_out: ") +
        e.what());
  }
  result.comparison = verify::compare_attention(p, reference, result.tolerance, got);
  result.model = tolerance_model.describe();
  return result;
}

/// A precision declaration from Python: None or "strict" (the strict float32 model),
/// "loosest" (the loosest pagecheck accepts), or a dict in its JSON form. Throws ValueError
/// naming `precision`.
verify::PrecisionModel precision_model(const py::handle& precision) {
  if (precision.is_none()) return verify::PrecisionModel::strict();
  if (py::isinstance<py::str>(precision)) {
    const std::string name = precision.cast<std::string>();
    if (name == "strict") return verify::PrecisionModel::strict();
    if (name == "loosest") return verify::PrecisionModel::loosest();
    throw py::value_error("precision: unknown name '" + name +
                          "' (expected 'strict', 'loosest' or a dict)");
  }
  if (!py::isinstance<py::dict>(precision)) {
    throw py::type_error("precision: expected None, 'strict', 'loosest' or a dict, got " +
                         py::repr(precision).cast<std::string>());
  }
  const std::string text = py::module_::import("json").attr("dumps")(precision).cast<std::string>();
  try {
    return nlohmann::json::parse(text).get<verify::PrecisionModel>();
  } catch (const std::exception& e) {
    throw py::value_error(std::string("precision: ") + e.what());
  }
}

}  // namespace

void bind_compare(py::module_& m) {
  using namespace pybind11::literals;
  using verify::ToleranceModel;
  py::class_<ToleranceModel>(m, "ToleranceModel",
                             "Constants of the attention error model and the variant's declared "
                             "precision (docs/tolerances.md).")
      .def(py::init([](const py::handle& precision, double c_exp, double c_arg, double c_tanh,
                       double safety) {
             return ToleranceModel{precision_model(precision), c_exp, c_arg, c_tanh, safety};
           }),
           py::kw_only(), "precision"_a = py::none(), "c_exp"_a = ToleranceModel{}.c_exp,
           "c_arg"_a = ToleranceModel{}.c_arg, "c_tanh"_a = ToleranceModel{}.c_tanh,
           "safety"_a = ToleranceModel{}.safety)
      .def_property(
          "precision",
          [](const ToleranceModel& t) {
            return py::module_::import("json").attr("loads")(nlohmann::json(t.precision).dump());
          },
          [](ToleranceModel& t, const py::handle& p) { t.precision = precision_model(p); },
          "the declared precision as a dict (docs/tolerances.md)")
      .def_readwrite("c_exp", &ToleranceModel::c_exp, "exp and normalization, in units of u")
      .def_readwrite("c_arg", &ToleranceModel::c_arg, "fast exp error growth, in units of u")
      .def_readwrite("c_tanh", &ToleranceModel::c_tanh, "tanh of a soft-cap, in units of u * cap")
      .def_readwrite("safety", &ToleranceModel::safety, "factor on the float32 part of the bound")
      .def("describe", &ToleranceModel::describe)
      .def("__repr__",
           [](const ToleranceModel& t) { return "ToleranceModel(" + t.describe() + ")"; });

  py::class_<ComparisonResult>(m, "AttentionComparison",
                               "A kernel's attention output against the float64 reference.")
      .def_property_readonly("passed",
                             [](const ComparisonResult& r) { return r.comparison.passed(); })
      .def_property_readonly("max_ratio",
                             [](const ComparisonResult& r) { return r.comparison.max_ratio; })
      .def_property_readonly("worst",
                             [](const ComparisonResult& r) {
                               const auto& w = r.comparison.worst;
                               return py::make_tuple(w[0], w[1], w[2]);
                             })
      .def_property_readonly("worst_expected",
                             [](const ComparisonResult& r) { return r.comparison.worst_expected; })
      .def_property_readonly("worst_actual",
                             [](const ComparisonResult& r) { return r.comparison.worst_actual; })
      .def_property_readonly("worst_tolerance",
                             [](const ComparisonResult& r) { return r.comparison.worst_tolerance; })
      .def_property_readonly("violations",
                             [](const ComparisonResult& r) { return r.comparison.violations; })
      .def_property_readonly("count",
                             [](const ComparisonResult& r) { return r.comparison.metrics.count; })
      .def_property_readonly("max_abs",
                             [](const ComparisonResult& r) { return r.comparison.metrics.max_abs; })
      .def_property_readonly("max_rel",
                             [](const ComparisonResult& r) { return r.comparison.metrics.max_rel; })
      .def_property_readonly(
          "rel_norm", [](const ComparisonResult& r) { return r.comparison.metrics.rel_norm; })
      .def_property_readonly(
          "num_nonfinite",
          [](const ComparisonResult& r) { return r.comparison.metrics.num_nonfinite; })
      .def_property_readonly("tolerance",
                             [](const ComparisonResult& r) {
                               return float64_array(std::vector<double>(r.tolerance), r.shape);
                             })
      .def_property_readonly("model", [](const ComparisonResult& r) { return r.model; })
      .def_property_readonly("description",
                             [](const ComparisonResult& r) { return r.comparison.describe(); })
      .def("__str__", [](const ComparisonResult& r) { return r.comparison.describe(); })
      .def("__repr__", [](const ComparisonResult& r) {
        return std::string("<AttentionComparison ") +
               (r.comparison.passed() ? "passed" : "FAILED") + ": " + r.comparison.describe() + ">";
      });

  // The keywords are documented and defaulted by pagecheck/compare.py.
  m.def("compare_attention", &compare_attention, "query"_a, "key_cache"_a, "value_cache"_a,
        "block_table"_a, "context_lens"_a, "actual"_a,
        "Compares a kernel's output with the reference within the derived tolerance.");
}

}  // namespace pagecheck::python
