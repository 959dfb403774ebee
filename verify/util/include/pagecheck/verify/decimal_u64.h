#pragma once
/// A 64-bit unsigned integer written in decimal (run seeds), read by one rule wherever one is
/// read (the CLI's --seed, the verify reports' "seed", a case spec's content_seed): digits only,
/// no sign, no space, no fraction, no overflow. Header only: it goes with verify/util's include
/// folder.
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
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

/// The value of `text`, for readers of files: throws std::invalid_argument
/// "<what> '<text>' is not a decimal integer in [0, 2^64-1]" unless parse_decimal_u64 is kOk.
inline uint64_t decimal_u64_or_throw(std::string_view text, const std::string& what) {
  uint64_t value = 0;
  if (parse_decimal_u64(text, &value) != DecimalU64::kOk) {
    throw std::invalid_argument(what + " '" + std::string(text) +
                                "' is not a decimal integer in [0, 2^64-1]");
  }
  return value;
}

}  // namespace pagecheck::verify
