/// Recording bandwidth reports under fixtures/bandwidth (see record.h).
#include "pagecheck/review/record.h"

#include <filesystem>

#include "pagecheck/bench/plot.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

void check_recordable(const std::string& repo, const bench::BenchReport& report,
                      const std::string& origin) {
  if (report.sweep != "default") {
    throw EvidenceError(origin +
                        ": only reports of the built-in sweep are recorded (this one is '" +
                        report.sweep + "')");
  }
  const auto families = load_family_sources(repo);
  const FamilyHash current =
      working_tree_hash(repo, find_family(families, report.family, kFamiliesFile));
  if (current.hash != report.source_hash) {
    throw EvidenceError(origin + ": measured on " + report.family + " sources " +
                        short_hash(report.source_hash) + ", but the sources in " + repo +
                        " hash to " + short_hash(current.hash) +
                        ": benchmark the current code (and rebuild first)");
  }
}

RecordedReport record_bandwidth_report(const std::string& repo, const bench::BenchReport& report,
                                       const std::string& dir) {
  const fs::path base =
      dir.empty() ? fs::path(bandwidth_report_path(repo, report.family, report.source_hash))
                  : fs::path(dir) / evidence_file_name(report.family, report.source_hash);
  std::error_code ec;
  fs::create_directories(base.parent_path(), ec);
  if (ec) throw std::runtime_error(base.parent_path().string() + ": " + ec.message());
  RecordedReport out;
  out.json = base.string();
  out.markdown = fs::path(base).replace_extension(".md").string();
  out.svg = fs::path(base).replace_extension(".svg").string();
  bench::write_report(report, out.json);
  out.plotted = bench::plot_report(repo, out.json, out.svg, &out.plot_error);
  bench::write_text_file_atomic(
      out.markdown, bench::render_report_markdown(report, fs::path(out.svg).filename().string()));
  return out;
}

}  // namespace pagecheck::review
