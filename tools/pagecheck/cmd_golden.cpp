/// `pagecheck golden`: regenerate, check, show and diff the golden fixtures (docs/fixtures.md).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::cli {
namespace {

namespace golden = pagecheck::verify::golden;

/// Options of all golden subcommands (owned by the callbacks).
struct GoldenOptions {
  std::string dir = golden::default_golden_dir();
  std::vector<std::string> cases;
  bool force = false;
  std::string file;
  std::string other;
};

void add_dir_option(CLI::App* command, GoldenOptions* options) {
  command
      ->add_option("--dir", options->dir,
                   "golden directory (default: $PAGECHECK_FIXTURES_DIR/golden, else the "
                   "source tree's fixtures/golden)")
      ->capture_default_str();
}

}  // namespace

void add_golden_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<GoldenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "golden", "Golden fixtures: regenerate, check against the reference, show, diff");
  cmd->require_subcommand(1);

  CLI::App* regen = cmd->add_subcommand(
      "regen",
      "Rebuild goldens from the case catalogue (temporary file + rename); a golden whose "
      "content changed is only replaced with --force. Exit 1 when one was refused.");
  regen->add_option("CASE", options->cases, "case names (default: every case)");
  regen->add_flag("--force", options->force, "replace goldens whose content changed");
  add_dir_option(regen, options.get());
  regen->callback([options, &exit_code] {
    golden::RegenOptions regen_options{options->dir, options->cases, options->force};
    exit_code = golden::regen_goldens(regen_options, std::cout);
  });

  CLI::App* check = cmd->add_subcommand(
      "check",
      "Reload every golden (schema, checksums, manifest), compare inputs with the catalogue and "
      "recompute outputs with the CPU reference. Exit 0 ok, 1 mismatch, 2 bad golden.");
  add_dir_option(check, options.get());
  check->callback(
      [options, &exit_code] { exit_code = golden::check_goldens(options->dir, std::cout); });

  CLI::App* show = cmd->add_subcommand("show", "Print a golden's parameters and datasets");
  show->add_option("FILE", options->file, "golden .h5 file")->required();
  show->callback([options, &exit_code] {
    golden::show_golden(options->file, std::cout);
    exit_code = 0;
  });

  CLI::App* diff = cmd->add_subcommand(
      "diff", "Where two golden files differ (attributes, datasets, values). Exit 1 if they do.");
  diff->add_option("A", options->file, "first .h5 file")->required();
  diff->add_option("B", options->other, "second .h5 file")->required();
  diff->callback([options, &exit_code] {
    exit_code = golden::diff_goldens(options->file, options->other, std::cout);
  });
}

}  // namespace pagecheck::cli
