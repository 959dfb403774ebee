/// Side-by-side rounds joined row by row (compare_rounds.h).
#include "pagecheck/bench/compare_rounds.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "pagecheck/bench/render.h"

namespace pagecheck::bench {

int RoundsComparison::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(),
                                        [&](const RoundsRow& r) { return r.verdict == verdict; }));
}

int RoundsComparison::regressions() const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const RoundsRow& r) { return r.regression; }));
}

int RoundsComparison::exit_code() const {
  return regressions() > 0 ? 1 : 0;
}

RoundsComparison compare_rounds(const std::vector<BenchReport>& old_rounds,
                                const std::vector<BenchReport>& new_rounds, double threshold) {
  if (old_rounds.empty() || old_rounds.size() != new_rounds.size()) {
    throw ReportError("rounds: expected one new report for each old one, got " +
                      std::to_string(old_rounds.size()) + " old and " +
                      std::to_string(new_rounds.size()) + " new");
  }
  RoundsComparison out;
  out.rounds = static_cast<int>(old_rounds.size());
  out.threshold = threshold;
  std::vector<Comparison> per_round;
  for (std::size_t i = 0; i < old_rounds.size(); ++i) {
    try {
      per_round.push_back(compare_reports(old_rounds[i], new_rounds[i], threshold));
    } catch (const ReportError& e) {
      throw ReportError("round " + std::to_string(i + 1) + ": " + e.what());
    }
    for (const auto& w : per_round.back().warnings) {
      out.warnings.push_back("round " + std::to_string(i + 1) + ": " + w);
    }
    if (old_rounds[i].environment.device != old_rounds[0].environment.device) {
      out.warnings.push_back("round " + std::to_string(i + 1) + " ran on '" +
                             old_rounds[i].environment.device + "', round 1 on '" +
                             old_rounds[0].environment.device + "'");
    }
  }
  out.title = per_round.front().title +
              (out.rounds > 1 ? ", " + std::to_string(out.rounds) + " alternating rounds" : "");
  // Rows in the order of the first round, then rows only later rounds have.
  for (const Comparison& c : per_round) {
    for (const CompareRow& r : c.rows) {
      const bool known = std::any_of(out.rows.begin(), out.rows.end(), [&](const RoundsRow& x) {
        return x.shape == r.shape && x.variant == r.old_variant;
      });
      if (known) continue;
      RoundsRow row;
      row.shape = r.shape;
      row.variant = r.old_variant;
      out.rows.push_back(row);
    }
  }
  for (RoundsRow& row : out.rows) {
    bool all_faster = true, all_slower = true, all_regress = true, any_measured = false;
    for (const Comparison& c : per_round) {
      const auto it = std::find_if(c.rows.begin(), c.rows.end(), [&](const CompareRow& r) {
        return r.shape == row.shape && r.old_variant == row.variant;
      });
      const bool found = it != c.rows.end();
      row.missing = row.missing || !found || it->missing;
      row.old_us.push_back(found && it->old_time.samples > 0 ? it->old_time.median : 0.0);
      row.new_us.push_back(found && it->new_time.samples > 0 ? it->new_time.median : 0.0);
      const bool compared = found && it->verdict != Verdict::kUnavailable;
      all_faster = all_faster && compared && it->verdict == Verdict::kFaster;
      all_slower = all_slower && compared && it->verdict == Verdict::kSlower;
      all_regress = all_regress && found && it->regression;
      if (compared) {
        row.min_speedup = any_measured ? std::min(row.min_speedup, it->speedup) : it->speedup;
        row.max_speedup = any_measured ? std::max(row.max_speedup, it->speedup) : it->speedup;
        any_measured = true;
      }
    }
    const bool every_round = any_measured && !row.missing;
    row.verdict = !every_round ? Verdict::kUnavailable
                  : all_faster ? Verdict::kFaster
                  : all_slower ? Verdict::kSlower
                               : Verdict::kSame;
    row.regression = all_regress;
  }
  return out;
}

namespace {

/// "12.5 / 12.7" (a dash for a round without a measurement).
std::string medians_cell(const std::vector<double>& us) {
  std::string out;
  for (double v : us) out += (out.empty() ? "" : " / ") + (v > 0 ? format_number(v) : "-");
  return out;
}

}  // namespace

std::string render_rounds_markdown(const RoundsComparison& c) {
  std::ostringstream os;
  os << "#### " << c.title << "\n\n";
  for (const auto& w : c.warnings) os << "> warning: " << w << "\n";
  if (!c.warnings.empty()) os << "\n";
  os << c.count(Verdict::kFaster) << " faster and " << c.count(Verdict::kSlower)
     << " slower in every round, " << c.count(Verdict::kSame) << " same or mixed, "
     << c.count(Verdict::kUnavailable) << " not comparable in every round";
  if (c.regressions() > 0) {
    os << "; **" << c.regressions() << " regression(s) beyond " << format_percent(c.threshold)
       << " in every round**";
  } else {
    os << "; no regression beyond " << format_percent(c.threshold) << " in every round";
  }
  os << ". Median microseconds of each round (r1 / r2 / ...); speedup = old / new time, its range "
        "over the rounds; a verdict holds only when every round gives it.\n\n";
  os << "| shape | variant | old us | new us | speedup | verdict |\n";
  os << "|---|---|---:|---:|---:|---|\n";
  for (const RoundsRow& r : c.rows) {
    char speed[48] = "-";
    if (r.max_speedup > 0) {
      std::snprintf(speed, sizeof speed, "%.3f-%.3fx", r.min_speedup, r.max_speedup);
    }
    std::string verdict = verdict_name(r.verdict);
    if (r.regression) verdict = "**" + verdict + " (regression)**";
    if (r.missing) verdict += " (missing in a round)";
    os << "| " << r.shape << " | " << r.variant << " | " << medians_cell(r.old_us) << " | "
       << medians_cell(r.new_us) << " | " << speed << " | " << verdict << " |\n";
  }
  return os.str();
}

}  // namespace pagecheck::bench
