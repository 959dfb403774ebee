#pragma once
/// Recording bandwidth reports as evidence: fixtures/bandwidth/<unit>-<hash12>.json with its
/// Markdown (.md) and plot (.svg), only for reports of the built-in sweep measured on exactly
/// the current sources.
#include <string>
#include <vector>

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

/// Splits one run's report (one family) into the reports recorded for it, one per evidence unit
/// of <repo>/kernels/families.json holding any of its variants, each with the unit's name and
/// current content hash set. A unit without a variant list keeps the built-in variants; a unit
/// naming variants (a plugin's) keeps those plus the built-in variants measured beside them,
/// so its report compares the plugin with pagecheck's kernels. `builtin` lists the report's
/// built-in variants. Throws EvidenceError naming the families file for a variant that is not
/// built in and that no unit holds; built-in variants no unit holds are left out.
std::vector<bench::BenchReport> reports_per_unit(const std::string& repo,
                                                 const bench::BenchReport& report,
                                                 const std::vector<std::string>& builtin);

/// Writes the report, its Markdown and its plot under `dir` (empty: <repo>/fixtures/bandwidth)
/// as <unit>-<hash12>.{json,md,svg}, replacing earlier files for the same hash. A missing
/// Python/matplotlib is not an error (see plot_error); the Markdown links the SVG anyway, so
/// `tools/plot_bandwidth.py` can draw it later.
RecordedReport record_bandwidth_report(const std::string& repo, const bench::BenchReport& report,
                                       const std::string& dir = "");

}  // namespace pagecheck::review
