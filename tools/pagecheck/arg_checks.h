#pragma once
/// CLI11 validators the commands share for numbers CLI11 would otherwise accept wrongly
/// (a uint64_t option takes "-1" as 2^64-1 and saturates overflowing values; PositiveNumber
/// accepts "nan"). A failed check is a CLI11 parse error: exit 2 naming the option.
#include <CLI/CLI.hpp>

namespace pagecheck::cli {

/// Accepts a decimal integer in [0, 2^64-1]; refuses signs, fractions and overflow.
CLI::Validator seed_value();

/// Accepts a finite number > 0; refuses nan, inf and non-positive values.
CLI::Validator positive_finite();

/// Accepts a number in [0, 1] (a share); refuses nan (which CLI::Range lets through).
CLI::Validator unit_interval();

/// Accepts what `--devices` may name before any GPU is asked: "all" or distinct device indices
/// like 0,1 (parse_device_list's rules; whether the devices exist is checked later).
CLI::Validator device_list();

/// Makes every option of `app` and its (nested) subcommands that takes a value refuse an empty
/// one: CLI11 reads `--threshold ""` as 0 and `--json ""` or `--reproduce ""` as the option not
/// given, so a script's unset variable would silently change what runs.
void refuse_empty_values(CLI::App& app);

}  // namespace pagecheck::cli
