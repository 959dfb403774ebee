#pragma once
/// Runs one case end to end inside the process that owns the backend (the worker): materialize
/// the spec, run the variant, run the reference, compare, and write the failure artefact when
/// asked. Never throws: every problem becomes a CaseResult.
#include <vector>

#include "pagecheck/verify/check/backend.h"
#include "pagecheck/verify/check/case_result.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::check {

/// Runs `request` on whichever backend has the variant.
CaseResult run_case(const std::vector<CaseBackend*>& backends, const CaseRequest& request,
                    const ToleranceModel& model = {});

/// Replays a failure artefact (HDF5 written by run_case): loads the inputs from the file, runs
/// the variant named in it and compares again. Bad files throw std::invalid_argument naming
/// the file and dataset.
CaseResult replay_artifact(const std::vector<CaseBackend*>& backends, const std::string& path,
                           int ref_threads = 0, const ToleranceModel& model = {});

}  // namespace pagecheck::verify::check
