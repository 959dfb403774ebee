#pragma once
/// Before/after comparison of bandwidth reports, following nvbench's compare script: a change
/// is real only when it exceeds the measured noise of both runs.
#include <string>
#include <vector>

#include "pagecheck/bench/report.h"

namespace pagecheck::bench {

/// Verdict on one row.
enum class Verdict {
  kFaster,       ///< new is faster by more than both runs' noise
  kSlower,       ///< new is slower by more than both runs' noise
  kSame,         ///< the difference is within the noise of the runs
  kUnavailable,  ///< one side was not measured (missing, unsupported or failed)
};
/// "faster", "slower", "same", "n/a".
const char* verdict_name(Verdict verdict);

/// Verdict for medians `old_median` -> `new_median` with relative noises (IQR / median):
/// same when |new/old - 1| <= max(old_noise, new_noise), else faster or slower.
Verdict classify(double old_median, double old_noise, double new_median, double new_noise);

/// One compared row: a shape, one variant on each side.
struct CompareRow {
  std::string shape;        ///< shape label
  std::string old_variant;  ///< variant on the old side
  std::string new_variant;  ///< variant on the new side
  SampleSummary old_time;   ///< old kernel time, microseconds (valid when available)
  SampleSummary new_time;   ///< new kernel time, microseconds (valid when available)
  double old_gbps = 0;      ///< old effective bandwidth
  double new_gbps = 0;      ///< new effective bandwidth
  double speedup = 0;       ///< old median / new median (> 1: new is faster)
  Verdict verdict = Verdict::kUnavailable;  ///< see Verdict
  bool regression = false;                  ///< slower, and new/old - 1 exceeds the threshold
  std::string note;      ///< why unavailable, e.g. "new: unsupported (head size 80)"
  bool missing = false;  ///< one side has no result at all for this shape and variant
};

/// A whole comparison.
struct Comparison {
  std::string title;                  ///< e.g. "paged_attention: v1_baseline -> v1_shared_q (...)"
  std::string old_label;              ///< "old", or the baseline variant's name
  std::string new_label;              ///< "new", or the candidate variant's name
  double threshold = 0.05;            ///< slowdown (new/old - 1) beyond which a slower row fails
  bool gated = true;                  ///< false: informational (no row is ever a regression)
  bool allow_missing = false;         ///< true: rows missing on one side do not fail
  std::vector<CompareRow> rows;       ///< per variant, per shape (old report's order first)
  std::vector<std::string> warnings;  ///< e.g. devices differ
  /// Rows with the given verdict.
  int count(Verdict verdict) const;
  /// Rows flagged as regressions.
  int regressions() const;
  /// Rows one side has no result for (see CompareRow::missing).
  int missing() const;
  /// True when missing rows fail the comparison: gated and not `allow_missing`.
  bool missing_fails() const { return gated && !allow_missing && missing() > 0; }
  /// 1 when any row regressed beyond the threshold or missing_fails(), else 0.
  int exit_code() const;
};

/// Compares two reports of the same family row by row: one row per (shape, variant) present in
/// either; a row present on one side only is `missing`. Shapes are matched by label, and a
/// label must name the same problem on both sides (dtype, heads, head size, block size, pool,
/// tokens or batch and context). Throws ReportError when the families differ, a label names
/// different shapes (the message names the label and the differing field) or `threshold` is
/// negative.
Comparison compare_reports(const BenchReport& old_report, const BenchReport& new_report,
                           double threshold);
/// Compares two variants inside one report, shape by shape (old = `baseline`); a shape one of
/// them has no result for is a `missing` row. Throws ReportError naming a variant the report
/// does not contain.
Comparison compare_variants(const BenchReport& report, const std::string& baseline,
                            const std::string& candidate, double threshold);

/// compare_variants without a gate: the informational side-by-side table of a report with
/// several variants (no row is a regression, exit_code() is 0).
Comparison side_by_side(const BenchReport& report, const std::string& baseline,
                        const std::string& candidate);

/// Markdown ready for a pull request: a summary line, then a table with one row per compared
/// shape (both latencies with noise, both bandwidths, speedup, verdict).
std::string render_comparison_markdown(const Comparison& comparison);

}  // namespace pagecheck::bench
