#pragma once
/// The named golden cases: each is a case spec (verify/gen) with a name and a description, and
/// its inputs are gen::materialize(spec), the one case stack of the harness.
///
/// The catalogue in case_catalogue.cpp is the source of every golden: `pagecheck golden regen`
/// rebuilds fixtures/golden/<name>.h5 and MANIFEST.json from it, and `check` fails when a
/// committed file no longer matches its definition. Every golden also stores its spec's JSON
/// (root attribute `spec`), so it can be reproduced and described without the catalogue.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::golden {

/// Version of the inputs a spec materializes to (gen::materialize's contents and poison) as
/// the goldens record it. Bump it, and regenerate with --force, whenever materialize() changes
/// what it writes.
inline constexpr int64_t kGeneratorVersion = 2;

/// One named golden case.
struct GoldenCase {
  std::string name;         ///< file stem, e.g. "pa_gqa_f16_h128_b16"
  std::string description;  ///< one line: what the case pins
  gen::CaseSpec spec;       ///< the case; its content seed seeds every tensor
};

/// Every named case, in a fixed order.
const std::vector<GoldenCase>& case_catalogue();
/// The case called `name`; throws std::invalid_argument listing the known names otherwise.
const GoldenCase& find_case(const std::string& name);

}  // namespace pagecheck::verify::golden
