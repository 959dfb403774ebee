#pragma once
/// Subcommands of the `pagecheck` executable. Each add_*_command registers one subcommand on
/// the app; its callback stores the process exit status in `exit_code`.
///
/// Exit status convention: 0 success, 1 a check failed (counterexample, regression, missing
/// evidence), 2 bad usage or bad input (named in the message), 3 internal or CUDA error.
#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"

namespace pagecheck::cli {

/// Every kernel family, in the order commands list them.
inline constexpr pc_family kAllFamilies[] = {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV,
                                             PC_FAMILY_RESHAPE_AND_CACHE};

/// Bad usage or bad input: main prints the message and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Resolves each `--plugin` path that names an existing file (relative to the current
/// directory, so `--plugin libfoo.so` finds ./libfoo.so instead of searching the library path)
/// to its absolute path, then loads each library once: a bad plugin is bad usage (exit 2,
/// UsageError naming the library) before any worker process or GPU work starts.
void check_plugins_loadable(std::vector<std::string>& plugins);

/// Throws UsageError when `variant` (if given) is not a registered variant (built-in or of a
/// `--plugin`), or not one of family `kernel` (if given), listing the known ones. Needs no GPU.
/// Builds without CUDA kernels know no built-in names: there only plugins' names are checked.
void check_variant_filter(const std::string& kernel, const std::string& variant,
                          const std::vector<std::string>& plugins);

/// Exit statuses, for the --help footer of every command (main.cpp).
inline constexpr const char* kExitStatusHelp =
    "Exit status:\n"
    "  0    ok\n"
    "  1    a check failed (counterexample, regression, missing evidence)\n"
    "  2    bad usage or bad input (the message names the argument, file or dataset)\n"
    "  3    internal or CUDA error, or no GPU where one is needed\n"
    "  130  interrupted by SIGINT (verify, selftest: the partial summary is printed first)";

void add_verify_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_selftest_command(CLI::App& app, int& exit_code);
void add_golden_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_review_command(CLI::App& app, int& exit_code);

}  // namespace pagecheck::cli
