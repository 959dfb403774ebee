#pragma once
/// Transitional: the tolerance model moved to its own room, verify/tolerance
/// (pagecheck/verify/tolerance.h). Remove once no file includes this header.
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::check {
using verify::attention_tolerance;
using verify::ToleranceModel;
using verify::ulp;
using verify::unit_roundoff;
}  // namespace pagecheck::verify::check
