#pragma once
/// Human-readable forms of reports and comparisons: the terminal table and Markdown.
#include <string>
#include <vector>

#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/report.h"

namespace pagecheck::bench {

/// Fixed-width table for the terminal: one line per (shape, variant) with median, noise,
/// bandwidth and share of the family's ceiling, flags at the end of the line.
std::string render_report_table(const BenchReport& report);

/// Markdown for a pull request or docs: provenance, ceilings, a table per variant and, when the
/// report holds several variants, a side-by-side table of each variant against the first.
/// `plot_link` (may be empty) is the relative path of the SVG plot, embedded as an image.
std::string render_report_markdown(const BenchReport& report, const std::string& plot_link);

/// The notes of one result: "ABOVE CEILING", "BELOW LAUNCH FLOOR" (`floor` of the same
/// report), "not converged", the status message.
std::string result_flags(const VariantResult& result, const LaunchFloor& floor);

/// Whether `result` is marked BELOW LAUNCH FLOOR: measured (status ok), the floor measured, and
/// its median below kFloorTolerance x the floor's median.
bool marked_below_floor(const VariantResult& result, const LaunchFloor& floor);

/// Whether `result` is marked ABOVE CEILING: measured (status ok) and flagged by the run
/// (`above_ceiling`). The one predicate of the table, the Markdown, the warnings of `bench` and
/// `bench record` (suspect_result_warnings), review's notes and, in Python,
/// tools/plot_bandwidth.py's cross.
bool marked_above_ceiling(const VariantResult& result);

/// One line per result of `report` marked above the ceiling or below the launch floor, in
/// report order: "<family> <shape label> <variant>: <GB/s> GB/s above the <kind> ceiling <GB/s>
/// GB/s (<share>)", "<family> <shape label> <variant>: <us> us below the launch floor <us> us".
/// Each means the timing, caching or byte formula is wrong; `bench` and `bench record` print them.
std::vector<std::string> suspect_result_warnings(const BenchReport& report);

/// "12.3", "1234", "0.456": a time or rate with about three significant digits.
std::string format_number(double value);
/// "1.5 KiB", "120 MiB", "2.0 GiB".
std::string format_bytes(int64_t bytes);
/// "12.5%".
std::string format_percent(double fraction);

}  // namespace pagecheck::bench
