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

/// Throws EvidenceError naming `origin` unless `report` is of the built-in ("default") sweep:
/// checked when recording (check_recordable) and by review, for a file that came another way.
void require_default_sweep(const bench::BenchReport& report, const std::string& origin);

/// Throws EvidenceError (naming `origin`) unless `report` may be recorded for the sources in
/// the working tree under `repo`: the built-in ("default") sweep, every shape of it and no
/// other, and a source hash equal to the family's current content hash. Throws
/// bench::ReportError naming `origin` for a report that measured nothing
/// (bench::require_measurements).
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

/// Where the report is recorded: <repo>/fixtures/bandwidth/<unit>-<hash12>.json, or that file
/// name under `dir` when `dir` is not empty.
std::string recorded_report_path(const std::string& repo, const bench::BenchReport& report,
                                 const std::string& dir = "");

/// Throws EvidenceError naming `json_path` when something is there and may not be replaced:
/// anything but a regular file, or a recorded report while `force` is false (the message says
/// --force).
void check_replaceable(const std::string& json_path, bool force);

/// Writes the report, its Markdown and its plot under `dir` (empty: <repo>/fixtures/bandwidth)
/// as <unit>-<hash12>.{json,md,svg}. Refuses (bench::ReportError) a report that measured
/// nothing, and (EvidenceError, check_replaceable) an existing report unless `force`. Each file
/// is written beside its target and renamed into place; when the plot cannot be drawn a plot
/// already there is removed, so no stale plot stays beside the new report. A missing
/// Python/matplotlib is not an error (see plot_error); the Markdown links the SVG anyway, so
/// `tools/plot_bandwidth.py` can draw it later.
RecordedReport record_bandwidth_report(const std::string& repo, const bench::BenchReport& report,
                                       const std::string& dir = "", bool force = false);

}  // namespace pagecheck::review
