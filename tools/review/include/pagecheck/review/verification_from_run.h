#pragma once
/// The verification record entries of one `pagecheck verify` run (verify::check::RunReport):
/// counts, the precision model the harness judged each variant by, worst errors, regimes and
/// tags, and the golden run's outcome.
#include <optional>
#include <string>

#include "pagecheck/review/evidence.h"
#include "pagecheck/verify/check/report.h"

namespace pagecheck::review {

/// The precision model verify::check::run_case compares `family`'s outputs with: for
/// paged_attention the verify::ToleranceModel the workers use with the variant's `declared`
/// precision (strict float32 when empty), named by its describe() and with its constants as
/// parameters (docs/tolerances.md); for the copy families bit-exact comparison of the whole
/// buffers ("bit_exact", no parameters).
PrecisionModel precision_model_for(const std::string& family,
                                   const std::optional<verify::PrecisionModel>& declared = {});

/// The record entry of one variant of a run drawn from `seed`: a case that did not pass and
/// was not declined counts as failed (kernel failures, harness errors, a failure found while
/// shrinking).
VariantVerification variant_verification(const verify::check::VariantReport& v, uint64_t seed);

/// The golden run of a record: `exit_status` of the golden child that checked folder `dir`
/// (stored relative to `repo` when inside it), with the number of goldens its MANIFEST.json
/// lists (0 when it cannot be read: the child then failed too).
GoldenRun golden_run(const std::string& repo, const std::string& dir, int exit_status);

}  // namespace pagecheck::review
