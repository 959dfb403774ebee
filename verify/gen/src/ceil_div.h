#pragma once
/// The generators' one ceiling division (internal).
#include <cstdint>

namespace pagecheck::verify::gen::detail {

/// ceil(a / b) for a >= 0, b > 0: blocks of b tokens that hold a tokens, and the like.
inline constexpr int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace pagecheck::verify::gen::detail
