#pragma once
/// Recording bandwidth reports as evidence: fixtures/bandwidth/<family>-<hash12>.json with its
/// Markdown (.md) and plot (.svg), only for reports of the built-in sweep measured on exactly
/// the current sources.
#include <string>

#include "pagecheck/bench/report.h"

namespace pagecheck::review {

/// What record_bandwidth_report wrote.
struct RecordedReport {
  std::string json;        ///< path of the report
  std::string markdown;    ///< path of its Markdown (links the SVG)
  std::string svg;         ///< path of the plot (written only when `plotted`)
  bool plotted = false;    ///< the plotting script succeeded
  std::string plot_error;  ///< why not, when it did not
};

/// Throws EvidenceError (naming `origin`) unless `report` may be recorded for the sources in
/// the working tree under `repo`: the built-in ("default") sweep, and a source hash equal to
/// the family's current content hash.
void check_recordable(const std::string& repo, const bench::BenchReport& report,
                      const std::string& origin);

/// Writes the report, its Markdown and its plot under `dir` (empty: <repo>/fixtures/bandwidth)
/// as <family>-<hash12>.{json,md,svg}, replacing earlier files for the same hash. A missing
/// Python/matplotlib is not an error (see plot_error); the Markdown links the SVG anyway, so
/// `tools/plot_bandwidth.py` can draw it later.
RecordedReport record_bandwidth_report(const std::string& repo, const bench::BenchReport& report,
                                       const std::string& dir = "");

}  // namespace pagecheck::review
