#pragma once
/// Helpers shared by cmd_bench.cpp, cmd_bench_compare.cpp and cmd_bench_record.cpp.
#include <CLI/CLI.hpp>

#include <string>

#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"

namespace pagecheck::cli {

/// The repository root: the current directory or the nearest parent with
/// kernels/families.json, else the current directory.
std::string default_repo();
/// Before any GPU work of a `--record` (empty `record_dir`) or `--record-dir` run of `family`:
/// throws (exit 2) naming the path when a report the run would record is already there and
/// `force` is false, or when fixtures/bandwidth cannot be written.
void check_record_targets(const std::string& repo, const std::string& record_dir, bool force,
                          const VariantRegistry& registry, pc_family family);
/// Records `report` (one run of `family`) for every evidence unit holding one of its variants:
/// under <repo>/fixtures/bandwidth as .json, .md and .svg, or as <unit>-<hash12>.json in
/// `record_dir`. Refuses a unit's report that measured nothing, and an existing one unless
/// `force`.
void record_run_report(const std::string& repo, const std::string& record_dir, bool force,
                       const VariantRegistry& registry, pc_family family,
                       const bench::BenchReport& report);
/// Adds `bench compare` and `bench record` to the bench subcommand.
void add_bench_subcommands(CLI::App& bench, int& exit_code);

}  // namespace pagecheck::cli
