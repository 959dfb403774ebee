#pragma once
/// Contents of the full-range regime (internal, shared by the materializers): values near the
/// largest finite value of what is stored, both signs, some exactly at it, mixed with ordinary
/// values; for the tokens a reshape quantizes also quotients beyond the fp8 saturation edge.
/// Every value is finite in its dtype.
#include <algorithm>
#include <cstdint>

#include "contents.h"

namespace pagecheck::verify::gen::detail {

/// Attention V of a 16/32-bit cache stays below (1 - 2^-6) times the largest finite value: a
/// correct kernel's normalized weights may sum to 1 plus a few float32 roundings, and a convex
/// combination of values at exactly the maximum would then overflow (docs/verify.md).
constexpr double kFullRangeHeadroom = 1.0 - 0x1.0p-6;

/// A full-range value from hash `h`. `top` is the value stored as the largest finite value
/// (the dtype's own maximum, or what an fp8 scale maps to the largest code); `ordinary` a
/// signed ordinary value. Of sixteen draws: two exactly +-top, seven in [top / 2, top), four
/// ordinary, and three beyond the edge when `beyond` > 0 (two in (top, min(4 top, beyond)], one
/// exactly +-beyond: the token dtype's largest finite value, quantized to the saturated code),
/// else near it as well.
inline double full_range_value(uint64_t h, double top, double ordinary, double beyond) {
  const uint64_t r = mix64(h ^ 0x5fa1d2c3b4e59687ull);
  const uint64_t kind = r % 16;
  const double sign = ((r >> 4) & 1) ? -1.0 : 1.0;
  const double u = unit(mix64(r));
  if (kind < 2) return sign * top;
  if (kind >= 12) return ordinary;
  if (beyond > 0 && kind == 11) return sign * beyond;
  if (beyond > 0 && kind >= 9) return sign * std::min(top * (1.0 + 3.0 * u + 0x1.0p-4), beyond);
  return sign * top * (1.0 - 0.5 * u);
}

}  // namespace pagecheck::verify::gen::detail
