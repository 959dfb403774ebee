/// Validators for seeds and positive finite numbers.
#include "arg_checks.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "pagecheck/verify/check/devices.h"
#include "pagecheck/verify/decimal_u64.h"

namespace pagecheck::cli {

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        switch (verify::parse_decimal_u64(text, &value)) {
          case verify::DecimalU64::kTooLarge:
            return "seed '" + text + "' is larger than 2^64-1";
          case verify::DecimalU64::kNotANumber:
            return "seed '" + text + "' is not a non-negative integer";
          case verify::DecimalU64::kOk:
            break;
        }
        return {};
      },
      "UINT64");
}

namespace {

/// A validator of one number: text that reads as a double and that `accepts`, otherwise
/// "'<text>' is not <what>".
CLI::Validator number_that(bool (*accepts)(double), const char* what, const char* type_name) {
  return CLI::Validator(
      [accepts, what](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !accepts(value)) {
          return "'" + text + "' is not " + what;
        }
        return {};
      },
      type_name);
}

}  // namespace

CLI::Validator positive_finite() {
  return number_that([](double v) { return std::isfinite(v) && v > 0; }, "a finite number > 0",
                     "POSITIVE");
}

CLI::Validator unit_interval() {
  return number_that([](double v) { return v >= 0 && v <= 1; }, "a number from 0 to 1", "SHARE");
}

CLI::Validator device_list() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          // Indices have at most 4 digits: with 10000 devices only the syntax can fail.
          (void)verify::check::parse_device_list(text, 10000);
        } catch (const std::invalid_argument& e) {
          // CLI11 puts the option's name first already: "--devices: 'abc': ...".
          const std::string message = e.what();
          const std::string prefix = "--devices ";
          return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
        }
        return std::string();
      },
      "", "device list");
}

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) { return value.empty() ? std::string("empty value") : std::string(); },
      "", "non-empty");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() != 0) option->check(non_empty);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    refuse_empty_values(*sub);
  }
}

}  // namespace pagecheck::cli
