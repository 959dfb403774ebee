/// `pagecheck bench compare` (before/after tables of two reports, or of two variants of one)
/// and `pagecheck bench record` (import reports measured elsewhere as recorded evidence).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cmd_bench_common.h"
#include "commands.h"
#include "output_paths.h"
#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/compare_rounds.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/review/families.h"
#include "pagecheck/review/record.h"
#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::cli {

namespace fs = std::filesystem;

std::string default_repo() {
  const std::string cwd = fs::current_path().string();
  return review::find_repo_root(cwd, cwd);
}

namespace {

struct CompareCliOptions {
  std::vector<std::string> files;
  std::vector<std::string> variants;
  double threshold = 0.05;
  std::string markdown_path;
  bool allow_missing = false;
  bool rounds = false;  ///< --rounds: the files are OLD NEW pairs of one side-by-side run
};

struct RecordCliOptions {
  std::vector<std::string> files;
  std::string repo;
  bool force = false;
};

/// Reads a report named on the command line; a directory, a missing file or a report that
/// measured nothing (bench::require_measurements: nothing to compare) is exit 2.
bench::BenchReport read_report_argument(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw UsageError(path + ": no such bandwidth report");
  if (fs::is_directory(st)) throw UsageError(path + ": is a directory, not a bandwidth report");
  bench::BenchReport report = bench::read_report(path);
  bench::require_measurements(report, path);
  return report;
}

/// `compare --rounds OLD1 NEW1 OLD2 NEW2 ...`: the rounds of one side-by-side run.
int run_compare_rounds(const CompareCliOptions& o) {
  if (!o.variants.empty()) throw UsageError("--rounds compares two builds, not --variants");
  if (o.files.size() < 2 || o.files.size() % 2 != 0) {
    throw UsageError("--rounds takes OLD NEW pairs in the order they ran, got " +
                     std::to_string(o.files.size()) + " report(s)");
  }
  std::vector<bench::BenchReport> old_rounds, new_rounds;
  for (std::size_t i = 0; i < o.files.size(); ++i) {
    (i % 2 == 0 ? old_rounds : new_rounds).push_back(read_report_argument(o.files[i]));
  }
  bench::RoundsComparison c;
  try {
    c = bench::compare_rounds(old_rounds, new_rounds, o.threshold);
  } catch (const bench::ReportError& e) {
    throw UsageError(e.what());
  }
  const std::string md = bench::render_rounds_markdown(c);
  std::cout << md;
  if (!o.markdown_path.empty()) verify::write_file_atomically(o.markdown_path, md);
  return c.exit_code();
}

int run_compare(const CompareCliOptions& o) {
  check_output_file(o.markdown_path, "--markdown", o.files);  // never over a compared report
  if (!(o.threshold >= 0) || !std::isfinite(o.threshold)) {
    throw UsageError("--threshold must be a non-negative number");
  }
  if (o.rounds) return run_compare_rounds(o);
  bench::Comparison c;
  if (o.files.size() == 2) {
    if (!o.variants.empty()) throw UsageError("--variants compares two variants of ONE report");
    const bench::BenchReport old_r = read_report_argument(o.files[0]);
    const bench::BenchReport new_r = read_report_argument(o.files[1]);
    try {
      c = bench::compare_reports(old_r, new_r, o.threshold);
    } catch (const bench::ReportError& e) {
      throw UsageError(o.files[0] + " vs " + o.files[1] + ": " + e.what());
    }
  } else if (o.files.size() == 1 && o.variants.size() == 2) {
    c = bench::compare_variants(read_report_argument(o.files[0]), o.variants[0], o.variants[1],
                                o.threshold);
  } else {
    throw UsageError(
        "compare takes OLD.json NEW.json, one report and --variants OLD,NEW, or --rounds with "
        "OLD NEW pairs");
  }
  c.allow_missing = o.allow_missing;
  const std::string md = bench::render_comparison_markdown(c);
  std::cout << md;
  if (!o.markdown_path.empty()) verify::write_file_atomically(o.markdown_path, md);
  if (c.missing_fails()) {
    std::cerr << "pagecheck bench compare: " << c.missing()
              << " row(s) are in one report only (marked **missing**); pass --allow-missing to "
                 "compare the rows both have\n";
  }
  return c.exit_code();
}

int run_record(const RecordCliOptions& o) {
  const std::string repo = o.repo.empty() ? default_repo() : o.repo;
  std::vector<bench::BenchReport> reports;
  std::set<std::string> targets;
  for (const auto& f : o.files) {  // check all first: record nothing when one is refused
    reports.push_back(read_report_argument(f));
    review::check_recordable(repo, reports.back(), f);
    const std::string target = review::recorded_report_path(repo, reports.back());
    if (!targets.insert(target).second) {
      throw UsageError(f + ": another report given records " + target + " too");
    }
    review::check_replaceable(target, o.force);
  }
  for (const auto& r : reports) {
    const review::RecordedReport rec = review::record_bandwidth_report(repo, r, "", o.force);
    std::cout << "recorded " << rec.json << ", " << rec.markdown
              << (rec.plotted ? ", " + rec.svg : " (no plot: " + rec.plot_error + ")") << "\n";
    // Recorded all the same (the evidence shows the mark), but said: a rate above its ceiling
    // or a time below the launch floor means a wrong byte formula, caching or timing (issue 17).
    for (const std::string& line : bench::suspect_result_warnings(r)) {
      std::cerr << "pagecheck bench record: warning: " << line << "\n";
    }
  }
  return 0;
}

}  // namespace

void add_bench_subcommands(CLI::App& bench, int& exit_code) {
  auto c = std::make_shared<CompareCliOptions>();
  CLI::App* cmp = bench.add_subcommand(
      "compare",
      "Compare OLD.json NEW.json (or two --variants of one report) as Markdown; "
      "exit 1 when a row is slower beyond the threshold");
  cmp->add_option("reports", c->files,
                  "OLD.json NEW.json, one report with --variants, or with --rounds OLD NEW "
                  "pairs")
      ->required()
      ->expected(1, 1000);
  cmp->add_flag("--rounds", c->rounds,
                "The reports are OLD NEW pairs of one side-by-side run, in the order they ran: "
                "a row is faster or slower only when it is so in every round");
  cmp->add_option("--variants", c->variants, "OLD,NEW variants of one report")->delimiter(',');
  cmp->add_option("--threshold", c->threshold, "Slowdown beyond which a slower row fails")
      ->capture_default_str();
  cmp->add_option("--markdown", c->markdown_path, "Also write the Markdown to FILE")
      ->type_name("FILE");
  cmp->add_flag("--allow-missing", c->allow_missing,
                "Rows (shape, variant) in one report only do not fail the comparison");
  cmp->footer(
      "Exit status: 0 no regression; 1 a row is slower beyond the threshold, a variant fails "
      "now, or a row is in one report only (without --allow-missing); 2 bad usage, or a "
      "missing, unreadable or inconsistent report (the message names the file, row and "
      "field); 3 internal error.");
  cmp->callback([c, &exit_code] { exit_code = run_compare(*c); });

  auto r = std::make_shared<RecordCliOptions>();
  CLI::App* rec = bench.add_subcommand(
      "record",
      "Record reports written by `bench --record-dir` on the GPU machine: checks the "
      "sources' hash, writes fixtures/bandwidth/<unit>-<hash12>.{json,md,svg}");
  rec->add_option("reports", r->files, "Report JSON files")->required();
  rec->add_option("--repo", r->repo, "Repository root (default: found from the current dir)");
  rec->add_flag("--force", r->force,
                "Replace a report already recorded for the same sources (.json, .md and .svg)");
  rec->footer(
      "Exit status: 0 recorded; 2 bad usage, or a report refused (unreadable, inconsistent, "
      "measured nothing, other sources or sweep, already recorded without --force): nothing "
      "is recorded then; 3 internal error. A measurement marked above its ceiling is recorded "
      "with a warning naming it.");
  rec->callback([r, &exit_code] { exit_code = run_record(*r); });
}

}  // namespace pagecheck::cli
