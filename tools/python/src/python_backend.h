#pragma once
/// A Python callable as the kernel of a verification run: a check::CaseBackend whose one
/// variant (registry "python") hands each materialized case to a Python runner and reads its
/// outputs back, so that the verifier, the case runner's comparison and the shrinking are the
/// CLI's own (verify/check).
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "pagecheck/verify/check/backend.h"

namespace pagecheck::python {

namespace py = pybind11;

/// Runs cases on `runner(family_name, inputs)`, where inputs is the dict of case_arrays.h and
/// the answer is the attention output, or the two outputs of a copy as a tuple (case_arrays.h
/// copy_outputs). Safe to call from any thread: it takes the GIL for each case. An exception
/// raised by the runner, or outputs of the wrong shape or dtype, end the run as
/// `launch_failed` (a counterexample, shrunk like any other); the first such exception is kept.
class PythonBackend final : public verify::check::CaseBackend {
 public:
  PythonBackend(verify::gen::VariantCaps caps, py::object runner);
  ~PythonBackend() override;
  const std::vector<verify::check::BackendVariant>& variants() const override { return variants_; }
  bool available(std::string* /*reason*/) const override { return true; }
  std::string description() const override { return "Python callable (CPU reference)"; }
  verify::AttentionRun run_attention(const verify::check::BackendVariant& v,
                                     const ref::PagedAttentionProblem& p,
                                     const ref::TokenLayout& out_layout, int run) override;
  verify::CopyRun run_gather(const verify::check::BackendVariant& /*v*/,
                             const ref::CacheCopyProblem& p, int /*run*/) override {
    return run_copy(p, true);
  }
  verify::CopyRun run_reshape(const verify::check::BackendVariant& /*v*/,
                              const ref::CacheCopyProblem& p, int /*run*/) override {
    return run_copy(p, false);
  }
  /// The first exception the runner raised (None when none); call with the GIL held.
  py::object first_error() const { return first_error_; }

 private:
  /// Calls the runner; on an exception fills `outcome` and returns None.
  py::object call(const char* family, const py::dict& inputs, verify::DeviceRunOutcome* outcome);
  /// Runs a gather (`gather`) or reshape_and_cache case.
  verify::CopyRun run_copy(const ref::CacheCopyProblem& p, bool gather);
  /// Records a failure of the runner or of reading its outputs.
  void fail(const std::string& what, verify::DeviceRunOutcome* outcome);
  std::vector<verify::check::BackendVariant> variants_;
  py::object runner_;
  py::object first_error_;
};

}  // namespace pagecheck::python
