/// `pagecheck golden`: regenerate, check, show and diff the golden fixtures (docs/fixtures.md).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "output_paths.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::cli {
namespace {

namespace golden = pagecheck::verify::golden;

/// Options of all golden subcommands (owned by the callbacks).
struct GoldenOptions {
  std::string dir;  ///< --dir; empty: resolve_golden_dir's default
  std::vector<std::string> cases;
  bool force = false;
  std::string file;
  std::string other;
  std::string json_path;  ///< check --json FILE
};

void add_dir_option(CLI::App* command, GoldenOptions* options) {
  command
      ->add_option("--dir", options->dir,
                   "golden directory (default: $PAGECHECK_FIXTURES_DIR/golden when set, else "
                   "fixtures/golden of the repository found from the current directory)")
      ->type_name("DIR");
}

/// Resolves the directory of `regen` / `check` and says which one is used.
golden::GoldenDir golden_dir(const GoldenOptions& options, golden::GoldenDirUse use) {
  golden::GoldenDir dir = golden::resolve_golden_dir(options.dir, "--dir", use);
  std::cout << "goldens: " << dir.describe() << "\n";
  return dir;
}

constexpr const char* kRegenExit =
    "Exit status: 0 ok; 1 a changed golden was refused (no --force); 2 bad usage or input "
    "(unknown case, missing or read-only directory, MANIFEST.json not a file); 3 internal or "
    "I/O error (e.g. disk full; no temporary file is left).";
constexpr const char* kCheckExit =
    "Exit status: 0 every golden matches; 1 a check failed (output, input, metadata or "
    "listing); 2 bad input (missing or corrupt golden, checksum mismatch, bad manifest, bad "
    "--dir or --json path); 3 internal error.";

}  // namespace

void add_golden_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<GoldenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "golden", "Golden fixtures: regenerate, check against the reference, show, diff");
  cmd->require_subcommand(1);
  cmd->footer(
      "Exit status: 0 ok; 1 a check failed, a golden was refused or files differ; 2 bad usage "
      "or bad input (named in the message); 3 internal or I/O error. See each subcommand's "
      "--help.");

  CLI::App* regen = cmd->add_subcommand(
      "regen",
      "Rebuild goldens from the case catalogue (temporary file + rename, one regen per "
      "directory at a time); a golden whose content changed is only replaced with --force.");
  regen->add_option("CASE", options->cases, "case names (default: every case)");
  regen->add_flag("--force", options->force, "replace goldens whose content changed");
  add_dir_option(regen, options.get());
  regen->footer(kRegenExit);
  regen->callback([options, &exit_code] {
    for (const std::string& name : options->cases) (void)golden::find_case(name);  // exit 2
    const golden::GoldenDir dir = golden_dir(*options, golden::GoldenDirUse::kWrite);
    golden::RegenOptions regen_options{dir.path, options->cases, options->force};
    exit_code = golden::regen_goldens(regen_options, std::cout);
  });

  CLI::App* check = cmd->add_subcommand(
      "check",
      "Reload every golden (schema, checksums, manifest metadata), compare inputs with the "
      "catalogue and recompute outputs with the CPU reference.");
  add_dir_option(check, options.get());
  check->add_option("--json", options->json_path, "Also write the verdicts as JSON to FILE")
      ->type_name("FILE");
  check->footer(kCheckExit);
  check->callback([options, &exit_code] {
    const golden::GoldenDir dir = golden_dir(*options, golden::GoldenDirUse::kRead);
    check_output_file(options->json_path, "--json", {dir.path});  // never over a golden
    golden::CheckReport report;
    exit_code = golden::check_goldens(dir.path, std::cout, &report);
    if (!options->json_path.empty()) {
      verify::write_file_atomically(options->json_path,
                                    golden::check_report_json(report, dir.source));
    }
  });

  CLI::App* show = cmd->add_subcommand("show", "Print a golden's parameters and datasets");
  show->add_option("FILE", options->file, "golden .h5 file")->required();
  show->footer("Exit status: 0 ok; 2 bad input (missing or corrupt file, named); 3 internal.");
  show->callback([options, &exit_code] {
    golden::show_golden(options->file, std::cout);
    exit_code = 0;
  });

  CLI::App* diff =
      cmd->add_subcommand("diff", "Where two golden files differ (attributes, datasets, values).");
  diff->add_option("A", options->file, "first .h5 file")->required();
  diff->add_option("B", options->other, "second .h5 file")->required();
  diff->footer(
      "Exit status: 0 the files hold the same content; 1 they differ; 2 bad input (a file "
      "missing or unreadable, named); 3 internal error.");
  diff->callback([options, &exit_code] {
    exit_code = golden::diff_goldens(options->file, options->other, std::cout);
  });
}

}  // namespace pagecheck::cli
