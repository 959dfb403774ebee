/// Markdown summary of a review, ready to post on a pull request.
#include <sstream>

#include "pagecheck/bench/render.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/review.h"

namespace pagecheck::review {

namespace {
std::string escape_cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
  return out;
}

/// "goldens: 35 passed; sanitizer: memcheck; tree dirty" for the verification cell.
std::string conditions(const VerificationRecord& r) {
  std::string s = "goldens: ";
  if (!r.golden.ran) {
    s += "not run";
  } else {
    s += std::to_string(r.golden.goldens) + (r.golden.passed() ? " passed" : " **failed**");
  }
  s += "; sanitizer: ";
  if (!r.sanitizer.ran) s += "not run";
  for (std::size_t i = 0; i < r.sanitizer.tools.size(); ++i) {
    s += (i ? "+" : "") + r.sanitizer.tools[i];
  }
  if (r.git_dirty) s += "; recorded from a dirty tree";
  return s;
}

}  // namespace

std::string render_review_markdown(const ReviewResult& r) {
  std::ostringstream os;
  os << "## pagecheck review: " << (r.exit_code() == 0 ? "PASS" : "FAIL") << "\n\n";
  os << "- Tree: "
     << (r.head.empty() ? std::string("not a git checkout") : "`" + short_hash(r.head) + "`")
     << (r.dirty ? " (working tree differs from HEAD)" : "") << "\n";
  if (!r.base.empty()) {
    os << "- Base: `" << r.base << "` = `" << short_hash(r.base_commit)
       << "`; a row fails when slower by more than " << bench::format_percent(r.threshold)
       << " and beyond both runs' noise\n";
  }
  os << "\n| kernels | sources | GPU verification | bandwidth report |"
     << (r.base.empty() ? "" : " since base |") << " status |\n";
  os << "|---|---|---|---|" << (r.base.empty() ? "" : "---|") << "---|\n";
  for (const auto& f : r.families) {
    os << "| `" << f.family << "`";
    if (!f.declared_variants.empty()) {
      os << " (" << f.kernel_family << ":";
      for (const auto& v : f.declared_variants) os << " `" << v << "`";
      os << ")";
    }
    os << " | `" << short_hash(f.hash) << "` (" << f.sources.size() << " files) | ";
    if (!f.verification_present) {
      os << "**missing**";
    } else {
      os << (f.verification_passed ? "passed: " : "**failed**: ")
         << escape_cell(f.verification_summary) << " on " << escape_cell(f.verification_device);
      if (f.verification) os << " (" << escape_cell(conditions(*f.verification)) << ")";
    }
    os << " | ";
    if (f.bandwidth_present) {
      os << "[" << escape_cell(f.bandwidth_device) << "](" << f.bandwidth_path << ")";
    } else {
      os << "**missing**";
    }
    os << " | ";
    if (!r.base.empty()) {
      if (f.base_hash.empty()) {
        os << "new";
      } else if (!f.changed) {
        os << "unchanged";
      } else {
        os << "changed (was `" << short_hash(f.base_hash) << "`)";
      }
      os << " | ";
    }
    os << (f.problems.empty() ? "ok" : "**" + std::to_string(f.problems.size()) + " problem(s)**")
       << " |\n";
  }
  os << "\n";
  if (r.problem_count() > 0) {
    os << "### Problems\n\n";
    for (const auto& f : r.families) {
      for (const auto& p : f.problems) os << "- `" << f.family << "`: " << p << "\n";
    }
    os << "\n";
  }
  bool any_note = !r.notes.empty();
  for (const auto& f : r.families) any_note = any_note || !f.notes.empty();
  if (any_note) {
    os << "### Notes\n\n";
    for (const auto& n : r.notes) os << "- " << n << "\n";
    for (const auto& f : r.families) {
      for (const auto& n : f.notes) os << "- `" << f.family << "`: " << n << "\n";
    }
    os << "\n";
  }
  for (const auto& f : r.families) {
    if (!f.comparison) continue;
    os << "### `" << f.family << "`: before/after (" << f.base_report_origin << " -> "
       << f.bandwidth_path << ")\n\n"
       << bench::render_comparison_markdown(*f.comparison) << "\n";
  }
  return os.str();
}

}  // namespace pagecheck::review
