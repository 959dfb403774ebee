/// Verification record entries from a verify run (see verification_from_run.h).
#include "pagecheck/review/verification_from_run.h"

#include <filesystem>

#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

PrecisionModel precision_model_for(const std::string& family,
                                   const std::optional<verify::PrecisionModel>& declared) {
  PrecisionModel m;
  if (family != "paged_attention") {
    m.name = "bit_exact";  // verify::check::compare_copy: every byte of the output buffers
    return m;
  }
  verify::ToleranceModel model;  // the run's constants, as run_case uses them in the workers
  if (declared) model.precision = *declared;
  m.name = model.describe();
  m.parameters = {{"c_exp", model.c_exp},
                  {"c_arg", model.c_arg},
                  {"c_tanh", model.c_tanh},
                  {"safety", model.safety}};
  return m;
}

VariantVerification variant_verification(const verify::check::VariantReport& v, uint64_t seed) {
  VariantVerification vv;
  vv.variant = v.variant;
  vv.seed = seed;
  vv.passed = v.passed;
  vv.failed = v.failed + v.errors + (v.failure && v.failed == 0 ? 1 : 0);
  vv.not_supported = v.not_supported;
  vv.cases = vv.passed + vv.failed + vv.not_supported;
  vv.precision = precision_model_for(v.family, v.precision);
  vv.max_ratio = v.max_ratio;
  vv.max_abs = v.max_abs;
  vv.regimes = v.regimes;
  vv.tags = v.tags;
  return vv;
}

GoldenRun golden_run(const std::string& repo, const std::string& dir, int exit_status) {
  GoldenRun g;
  g.ran = true;
  g.exit_status = exit_status;
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  const fs::path root = fs::weakly_canonical(fs::absolute(repo, ec), ec);
  const fs::path rel = abs.lexically_relative(root);
  const bool inside = !rel.empty() && *rel.begin() != "..";
  g.dir = inside ? rel.generic_string() : abs.string();
  try {
    g.goldens = static_cast<int64_t>(verify::golden::list_goldens(dir).size());
  } catch (const std::exception&) {
    g.goldens = 0;
  }
  return g;
}

}  // namespace pagecheck::review
