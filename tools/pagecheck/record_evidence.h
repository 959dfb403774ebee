#pragma once
/// `verify --record`: writes the verification evidence (tools/review) of the variants a run
/// verified, one record per evidence unit of kernels/families.json (record_units.h), with the
/// run's conditions: goldens, compute-sanitizer, the repository's dirty flag.
#include <string>

#include "pagecheck/review/evidence.h"
#include "pagecheck/verify/check/report.h"

namespace pagecheck::cli {

/// Writes (merging by variant) fixtures/verification/<unit>-<hash12>.json under `repo` for
/// every unit holding a built-in or plugin variant of `report`, and prints each path with its
/// summary. `golden` is the run's golden check (GoldenRun{} when --golden was not given).
void record_evidence(const std::string& repo, const verify::check::RunReport& report,
                     const review::GoldenRun& golden);

}  // namespace pagecheck::cli
