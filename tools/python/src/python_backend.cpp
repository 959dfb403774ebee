/// The Python-callable backend (python_backend.h).
#include "python_backend.h"

#include <utility>

#include "case_arrays.h"

namespace pagecheck::python {

using verify::AttentionRun;
using verify::CopyRun;
using verify::DeviceRunOutcome;
using verify::LaunchDisposition;

PythonBackend::PythonBackend(verify::gen::VariantCaps caps, py::object runner)
    : runner_(std::move(runner)), first_error_(py::none()) {
  verify::check::BackendVariant v;
  v.registry = "python";
  v.caps = std::move(caps);
  v.description = "a Python callable";
  variants_.push_back(std::move(v));
}

PythonBackend::~PythonBackend() {
  py::gil_scoped_acquire gil;
  runner_ = py::object();
  first_error_ = py::object();
}

void PythonBackend::fail(const std::string& what, DeviceRunOutcome* outcome) {
  outcome->disposition = LaunchDisposition::kLaunchFailed;
  outcome->message = what;
}

py::object PythonBackend::call(const char* family, const py::dict& inputs,
                               DeviceRunOutcome* outcome) {
  try {
    py::object result = runner_(family, inputs);
    outcome->disposition = LaunchDisposition::kLaunched;
    return result;
  } catch (py::error_already_set& e) {
    if (first_error_.is_none()) first_error_ = e.value();
    fail(std::string("the Python kernel raised ") + e.what(), outcome);
    return py::none();
  }
}

AttentionRun PythonBackend::run_attention(const verify::check::BackendVariant& /*v*/,
                                          const ref::PagedAttentionProblem& p,
                                          const ref::TokenLayout& out_layout, int /*run*/) {
  py::gil_scoped_acquire gil;
  AttentionRun r;
  const py::object out = call("paged_attention", attention_arrays(p, out_layout), &r.outcome);
  if (r.outcome.disposition != LaunchDisposition::kLaunched) return r;
  try {
    r.out = attention_output(out, p, "the Python kernel's output", p.dtype);
  } catch (const std::exception& e) {
    fail(e.what(), &r.outcome);
  }
  return r;
}

namespace {

/// The two outputs of a copy from the runner's answer (a 2-sequence).
std::pair<py::object, py::object> two_outputs(const py::object& result) {
  if (!py::isinstance<py::tuple>(result) && !py::isinstance<py::list>(result)) {
    throw py::type_error("the Python kernel's output: expected two arrays, got " +
                         py::repr(result).cast<std::string>());
  }
  const py::sequence s = result;
  if (s.size() != 2) throw py::value_error("the Python kernel's output: expected two arrays");
  return {s[0], s[1]};
}

}  // namespace

CopyRun PythonBackend::run_copy(const ref::CacheCopyProblem& p, bool gather) {
  py::gil_scoped_acquire gil;
  CopyRun r;
  const char* family = gather ? "gather_cached_kv" : "reshape_and_cache";
  const py::object out = call(family, copy_arrays(p, gather), &r.outcome);
  if (r.outcome.disposition != LaunchDisposition::kLaunched) return r;
  try {
    const auto [first, second] = two_outputs(out);
    copy_outputs(first, second, p, gather, &r.first, &r.second);
  } catch (const std::exception& e) {
    fail(e.what(), &r.outcome);
  }
  return r;
}

}  // namespace pagecheck::python
