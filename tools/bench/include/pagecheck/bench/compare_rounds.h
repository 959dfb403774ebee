#pragma once
/// Side-by-side runs of two builds in alternating rounds (old, new, old, new, ... in one device
/// call; docs/performance.md "Comparing reports"): each round is compared like two reports
/// (compare.h), and a row's verdict must hold in every round, so that drift between rounds
/// (clocks, a neighbour on the GPU, the order of allocations) cannot pass for a change.
#include <string>
#include <vector>

#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/report.h"

namespace pagecheck::bench {

/// One (shape, variant) over all rounds.
struct RoundsRow {
  std::string shape;           ///< shape label
  std::string variant;         ///< variant name
  std::vector<double> old_us;  ///< old median per round (0: not measured in that round)
  std::vector<double> new_us;  ///< new median per round (0: not measured in that round)
  double min_speedup = 0;      ///< smallest old / new time over the rounds
  double max_speedup = 0;      ///< largest old / new time over the rounds
  Verdict verdict = Verdict::kUnavailable;  ///< faster / slower only when so in every round
  bool regression = false;                  ///< a regression (compare.h) in every round
  bool missing = false;                     ///< one side has no result in some round
};

/// A whole side-by-side run.
struct RoundsComparison {
  std::string title;                  ///< family and both sides' source hashes and device
  int rounds = 0;                     ///< number of (old, new) pairs
  double threshold = 0.05;            ///< slowdown beyond which a slower row fails
  std::vector<RoundsRow> rows;        ///< per variant, per shape (first round's order)
  std::vector<std::string> warnings;  ///< e.g. the rounds ran on different devices
  /// Rows with the given verdict.
  int count(Verdict verdict) const;
  /// Rows that regressed in every round.
  int regressions() const;
  /// 1 when a row regressed in every round, else 0 (missing rows are marked, never a pass).
  int exit_code() const;
};

/// Compares round i's `old_rounds[i]` with `new_rounds[i]` (compare_reports) and joins the
/// rounds row by row: faster or slower only when every round says so (else same), a
/// regression only when every round's is, the speedup as its range over the rounds. Throws
/// ReportError when there is no round, the counts differ, or a round cannot be compared
/// (another family, a label naming another problem).
RoundsComparison compare_rounds(const std::vector<BenchReport>& old_rounds,
                                const std::vector<BenchReport>& new_rounds, double threshold);

/// Markdown: a summary line, then one row per (shape, variant): the medians of every round on
/// each side, the speedup range and the verdict.
std::string render_rounds_markdown(const RoundsComparison& comparison);

}  // namespace pagecheck::bench
