/// `pagecheck bench compare` (before/after tables of two reports, or of two variants of one)
/// and `pagecheck bench record` (import reports measured elsewhere as recorded evidence).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cmd_bench_common.h"
#include "commands.h"
#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/review/families.h"
#include "pagecheck/review/record.h"

namespace pagecheck::cli {

namespace fs = std::filesystem;

std::string default_repo() {
  const std::string cwd = fs::current_path().string();
  return review::find_repo_root(cwd, cwd);
}

void check_output_dir(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  if (!fs::is_directory(fs::absolute(path).parent_path(), ec)) {
    throw UsageError(option + ": directory of '" + path + "' does not exist");
  }
}

namespace {

struct CompareCliOptions {
  std::vector<std::string> files;
  std::vector<std::string> variants;
  double threshold = 0.05;
  std::string markdown_path;
};

struct RecordCliOptions {
  std::vector<std::string> files;
  std::string repo;
};

int run_compare(const CompareCliOptions& o) {
  check_output_dir("--markdown", o.markdown_path);
  bench::Comparison c;
  if (o.files.size() == 2) {
    if (!o.variants.empty()) throw UsageError("--variants compares two variants of ONE report");
    c = bench::compare_reports(bench::read_report(o.files[0]), bench::read_report(o.files[1]),
                               o.threshold);
  } else if (o.files.size() == 1 && o.variants.size() == 2) {
    c = bench::compare_variants(bench::read_report(o.files[0]), o.variants[0], o.variants[1],
                                o.threshold);
  } else {
    throw UsageError("compare takes OLD.json NEW.json, or one report and --variants OLD,NEW");
  }
  const std::string md = bench::render_comparison_markdown(c);
  std::cout << md;
  if (!o.markdown_path.empty()) bench::write_text_file_atomic(o.markdown_path, md);
  return c.exit_code();
}

int run_record(const RecordCliOptions& o) {
  const std::string repo = o.repo.empty() ? default_repo() : o.repo;
  std::vector<bench::BenchReport> reports;
  for (const auto& f : o.files) {  // check all first: record nothing when one is refused
    reports.push_back(bench::read_report(f));
    review::check_recordable(repo, reports.back(), f);
  }
  for (const auto& r : reports) {
    const review::RecordedReport rec = review::record_bandwidth_report(repo, r);
    std::cout << "recorded " << rec.json << ", " << rec.markdown
              << (rec.plotted ? ", " + rec.svg : " (no plot: " + rec.plot_error + ")") << "\n";
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
  cmp->add_option("reports", c->files, "OLD.json NEW.json, or one report with --variants")
      ->required()
      ->expected(1, 2);
  cmp->add_option("--variants", c->variants, "OLD,NEW variants of one report")->delimiter(',');
  cmp->add_option("--threshold", c->threshold, "Slowdown beyond which a slower row fails")
      ->capture_default_str();
  cmp->add_option("--markdown", c->markdown_path, "Also write the Markdown to FILE")
      ->type_name("FILE");
  cmp->callback([c, &exit_code] { exit_code = run_compare(*c); });

  auto r = std::make_shared<RecordCliOptions>();
  CLI::App* rec = bench.add_subcommand(
      "record",
      "Record reports written by `bench --record-dir` on the GPU machine: checks the "
      "sources' hash, writes fixtures/bandwidth/<unit>-<hash12>.{json,md,svg}");
  rec->add_option("reports", r->files, "Report JSON files")->required();
  rec->add_option("--repo", r->repo, "Repository root (default: found from the current dir)");
  rec->callback([r, &exit_code] { exit_code = run_record(*r); });
}

}  // namespace pagecheck::cli
