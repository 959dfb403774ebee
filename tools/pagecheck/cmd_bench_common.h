#pragma once
/// Helpers shared by cmd_bench.cpp and cmd_bench_compare.cpp.
#include <CLI/CLI.hpp>

#include <string>

namespace pagecheck::cli {

/// The repository root: the current directory or the nearest parent with
/// kernels/families.json, else the current directory.
std::string default_repo();
/// Throws UsageError naming `option` when the directory of `path` does not exist.
void check_output_dir(const std::string& option, const std::string& path);
/// Adds `bench compare` and `bench record` to the bench subcommand.
void add_bench_subcommands(CLI::App& bench, int& exit_code);

}  // namespace pagecheck::cli
