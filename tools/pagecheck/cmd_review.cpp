/// `pagecheck review`: is every kernel family's current code verified on a GPU, how fast is it,
/// and how fast was it at the base revision. Prints one Markdown summary (and, with --json,
/// writes the result as JSON).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "commands.h"
#include "output_paths.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"
#include "pagecheck/review/families.h"
#include "pagecheck/review/review.h"
#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kReviewExitStatus =
    "Exit status:\n"
    "  0  every evidence unit has a passing, complete GPU verification record and a bandwidth\n"
    "     report for its current sources, and no compared row is slower beyond the threshold\n"
    "  1  a problem: evidence missing, a record that failed, is quick or lacks a registered\n"
    "     variant, a failed report row, a regression beyond the threshold\n"
    "  2  bad usage or bad input: an unknown revision, a missing or invalid\n"
    "     kernels/families.json, a corrupt, inconsistent or pagecheck.verification/1 record\n"
    "     or report (the message names the file), an unwritable --markdown or --json path\n"
    "  3  internal error";

struct ReviewCliOptions {
  std::string base;
  double threshold = 0.05;
  std::string repo;
  std::string markdown_path;
  std::string json_path;
};

/// The kernel families pagecheck implements and, when this build has the built-in kernels,
/// their registered built-in variants (no GPU needed).
void fill_registered_variants(review::ReviewOptions& options) {
  VariantRegistry registry;
  register_builtin_kernels(registry);
  std::map<std::string, std::vector<std::string>> builtin;
  for (pc_family f : kAllFamilies) {
    options.kernel_families.push_back(family_name(f));
    auto& names = builtin[family_name(f)];
    for (const VariantInfo* v : registry.family(f)) {
      if (v->origin == "builtin") names.push_back(v->name);
    }
  }
  if (builtin_kernels_available()) options.builtin_variants = std::move(builtin);
}

int run_review_command(const ReviewCliOptions& o) {
  check_output_file(o.markdown_path, "--markdown");
  check_output_file(o.json_path, "--json");
  review::ReviewOptions options;
  const std::string cwd = fs::current_path().string();
  options.repo = o.repo.empty() ? review::find_repo_root(cwd, cwd) : o.repo;
  if (!o.base.empty()) options.base = o.base;
  options.threshold = o.threshold;
  fill_registered_variants(options);
  const review::ReviewResult result = review::run_review(options);
  const std::string md = review::render_review_markdown(result);
  std::cout << md;
  if (!o.markdown_path.empty()) verify::write_file_atomically(o.markdown_path, md);
  if (!o.json_path.empty()) {
    verify::write_file_atomically(o.json_path, review::review_to_json(result).dump(2) + "\n");
  }
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
  cmd->add_option("--json", o->json_path, "Also write the review result as JSON to FILE")
      ->type_name("FILE");
  cmd->footer(kReviewExitStatus);
  cmd->callback([o, &exit_code] { exit_code = run_review_command(*o); });
}

}  // namespace pagecheck::cli
