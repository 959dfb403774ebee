/// `pagecheck review`: is every kernel family's current code verified on a GPU, how fast is it,
/// and how fast was it at the base revision. Prints one Markdown summary.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/review/families.h"
#include "pagecheck/review/review.h"

namespace pagecheck::cli {
namespace {

namespace fs = std::filesystem;

struct ReviewCliOptions {
  std::string base;
  double threshold = 0.05;
  std::string repo;
  std::string markdown_path;
};

int run_review_command(const ReviewCliOptions& o) {
  review::ReviewOptions options;
  const std::string cwd = fs::current_path().string();
  options.repo = o.repo.empty() ? review::find_repo_root(cwd, cwd) : o.repo;
  if (!o.base.empty()) options.base = o.base;
  options.threshold = o.threshold;
  if (!o.markdown_path.empty()) {
    std::error_code ec;
    if (!fs::is_directory(fs::absolute(o.markdown_path).parent_path(), ec)) {
      throw UsageError("--markdown: directory of '" + o.markdown_path + "' does not exist");
    }
  }
  const review::ReviewResult result = review::run_review(options);
  const std::string md = review::render_review_markdown(result);
  std::cout << md;
  if (!o.markdown_path.empty()) bench::write_text_file_atomic(o.markdown_path, md);
  return result.exit_code();
}

}  // namespace

void add_review_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReviewCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "review",
      "Check that every kernel family's current sources have recorded GPU evidence, "
      "and compare bandwidth with a base revision");
  cmd->add_option("--base", o->base, "Base revision (e.g. origin/main) for before/after tables");
  cmd->add_option("--threshold", o->threshold, "Slowdown beyond which a slower row fails")
      ->capture_default_str();
  cmd->add_option("--repo", o->repo, "Repository root (default: found from the current dir)");
  cmd->add_option("--markdown", o->markdown_path, "Also write the summary to FILE")
      ->type_name("FILE");
  cmd->callback([o, &exit_code] { exit_code = run_review_command(*o); });
}

}  // namespace pagecheck::cli
