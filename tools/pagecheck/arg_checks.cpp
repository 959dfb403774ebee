/// Validators for seeds and positive finite numbers.
#include "arg_checks.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace pagecheck::cli {

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range) {
          return "seed '" + text + "' is larger than 2^64-1";
        }
        if (text.empty() || ec != std::errc() || stop != end) {
          return "seed '" + text + "' is not a non-negative integer";
        }
        return {};
      },
      "UINT64");
}

CLI::Validator positive_finite() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value <= 0) {
          return "'" + text + "' is not a finite number > 0";
        }
        return {};
      },
      "POSITIVE");
}

CLI::Validator unit_interval() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !(value >= 0 && value <= 1)) {
          return "'" + text + "' is not a number from 0 to 1";
        }
        return {};
      },
      "SHARE");
}

}  // namespace pagecheck::cli
