/// Markdown of a comparison, ready for a pull request.
#include <cstdio>
#include <sstream>

#include "pagecheck/bench/render.h"

namespace pagecheck::bench {

namespace {
std::string time_cell(const SampleSummary& s) {
  if (s.samples <= 0) return "-";
  return format_number(s.median) + " (" + format_percent(s.noise) + ")";
}
}  // namespace

std::string render_comparison_markdown(const Comparison& c) {
  std::ostringstream os;
  const bool same_variant_rows =
      !c.rows.empty() && c.rows.front().old_variant == c.rows.front().new_variant;
  os << "#### " << c.title << "\n\n";
  for (const auto& w : c.warnings) os << "> warning: " << w << "\n";
  if (!c.warnings.empty()) os << "\n";
  os << c.count(Verdict::kFaster) << " faster, " << c.count(Verdict::kSlower) << " slower, "
     << c.count(Verdict::kSame) << " same within noise, " << c.count(Verdict::kUnavailable)
     << " not comparable";
  if (c.missing() > 0) {
    os << (c.missing_fails() ? "; **" : "; ") << c.missing() << " row(s) in one report only"
       << (c.missing_fails() ? "**" : "");
  }
  if (c.gated && c.regressions() > 0) {
    os << "; **" << c.regressions() << " regression(s) beyond " << format_percent(c.threshold)
       << "**";
  } else if (c.gated) {
    os << "; no regression beyond " << format_percent(c.threshold);
  }
  os << ". Times in microseconds, median (noise = IQR / median); speedup = " << c.old_label << " / "
     << c.new_label << " time; a change counts only beyond both runs' "
     << "noise.\n\n";
  os << "| shape |" << (same_variant_rows ? " variant |" : "") << " " << c.old_label << " us | "
     << c.new_label << " us | " << c.old_label << " GB/s | " << c.new_label
     << " GB/s | speedup | verdict |\n";
  os << "|---|" << (same_variant_rows ? "---|" : "") << "---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : c.rows) {
    os << "| " << r.shape << " |";
    if (same_variant_rows) os << " " << r.old_variant << " |";
    os << " " << time_cell(r.old_time) << " | " << time_cell(r.new_time) << " | "
       << (r.old_gbps > 0 ? format_number(r.old_gbps) : "-") << " | "
       << (r.new_gbps > 0 ? format_number(r.new_gbps) : "-") << " | ";
    if (r.verdict != Verdict::kUnavailable) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3fx", r.speedup);
      os << buf;
    } else {
      os << "-";
    }
    os << " | ";
    std::string verdict = verdict_name(r.verdict);
    if (r.regression) verdict = "**" + verdict + " (regression)**";
    if (r.missing && c.missing_fails()) verdict = "**missing**";
    if (!r.note.empty()) verdict += ": " + r.note;
    for (char& ch : verdict) {
      if (ch == '|' || ch == '\n') ch = '/';
    }
    os << verdict << " |\n";
  }
  return os.str();
}

}  // namespace pagecheck::bench
