#pragma once
/// A 64-bit unsigned integer written in decimal (run seeds), read by one rule wherever one is
/// read (the CLI's --seed, the verify reports' "seed"): digits only, no sign, no space, no
/// fraction, no overflow. Header only: it goes with verify/util's include folder.
#include <charconv>
#include <cstdint>
#include <string_view>

namespace pagecheck::verify {

/// What reading a decimal u64 found.
enum class DecimalU64 {
  kOk,          ///< the whole text is a decimal integer in [0, 2^64-1]
  kNotANumber,  ///< empty, a sign, other characters, or text after the digits
  kTooLarge,    ///< digits only, but above 2^64-1
};

/// Reads `text` into `*value` (set only for kOk).
inline DecimalU64 parse_decimal_u64(std::string_view text, uint64_t* value) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) return DecimalU64::kTooLarge;
  if (text.empty() || ec != std::errc() || stop != end) return DecimalU64::kNotANumber;
  *value = v;
  return DecimalU64::kOk;
}

}  // namespace pagecheck::verify
