/// `pagecheck`: verification and bandwidth harness for paged-attention and KV-cache kernels.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "arg_checks.h"
#include "commands.h"

namespace pagecheck::cli {

/// Puts the exit statuses under --help of `app` and of every (nested) subcommand that has no
/// footer of its own.
void set_exit_status_footers(CLI::App& app) {
  if (app.get_footer().empty()) app.footer(kExitStatusHelp);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    set_exit_status_footers(*sub);
  }
}

}  // namespace pagecheck::cli

int main(int argc, char** argv) {
  CLI::App app{"pagecheck: verify and benchmark paged-attention and KV-cache copy kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pagecheck 0.1.0");
  int exit_code = 0;
  pagecheck::cli::add_verify_command(app, exit_code);
  pagecheck::cli::add_list_command(app, exit_code);
  pagecheck::cli::add_selftest_command(app, exit_code);
  pagecheck::cli::add_golden_command(app, exit_code);
  pagecheck::cli::add_bench_command(app, exit_code);
  pagecheck::cli::add_review_command(app, exit_code);
  pagecheck::cli::set_exit_status_footers(app);
  pagecheck::cli::refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const pagecheck::cli::UsageError& e) {
    std::cerr << "pagecheck: error: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "pagecheck: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "pagecheck: internal error: " << e.what() << "\n";
    return 3;
  }
  return exit_code;
}
