/// Recording the report of a `pagecheck bench --record` / `--record-dir` run: the targets are
/// checked before the benchmark runs, the reports written after it (see cmd_bench_common.h).
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cmd_bench_common.h"
#include "output_paths.h"
#include "pagecheck/review/record.h"

namespace pagecheck::cli {

namespace fs = std::filesystem;

namespace {

/// The built-in variants among `variants` of `family`.
std::vector<std::string> builtin_variants(const VariantRegistry& registry, pc_family family,
                                          const std::vector<std::string>& variants) {
  std::vector<std::string> builtin;
  for (const auto& v : variants) {
    const VariantInfo* info = registry.find(family, v);
    if (info != nullptr && info->origin == "builtin") builtin.push_back(v);
  }
  return builtin;
}

}  // namespace

void check_record_targets(const std::string& repo, const std::string& record_dir, bool force,
                          const VariantRegistry& registry, pc_family family) {
  bench::BenchReport skeleton;  // the run's variants, nothing measured yet
  skeleton.family = family_name(family);
  for (const auto* v : registry.family(family)) skeleton.variants.push_back(v->name);
  const auto builtin = builtin_variants(registry, family, skeleton.variants);
  for (const bench::BenchReport& r : review::reports_per_unit(repo, skeleton, builtin)) {
    const std::string path = review::recorded_report_path(repo, r, record_dir);
    if (record_dir.empty()) check_output_folder(fs::path(path).parent_path().string(), "--record");
    review::check_replaceable(path, force);
  }
}

void record_run_report(const std::string& repo, const std::string& record_dir, bool force,
                       const VariantRegistry& registry, pc_family family,
                       const bench::BenchReport& report) {
  const auto builtin = builtin_variants(registry, family, report.variants);
  for (const bench::BenchReport& r : review::reports_per_unit(repo, report, builtin)) {
    if (!record_dir.empty()) {
      const std::string path = review::recorded_report_path(repo, r, record_dir);
      bench::require_measurements(r, "the " + r.unit_name() + " report for " + path);
      review::check_replaceable(path, force);
      bench::write_report(r, path);
      std::cerr << "wrote " << path << " (import it with `pagecheck bench record`)\n";
      continue;
    }
    const review::RecordedReport rec = review::record_bandwidth_report(repo, r, "", force);
    std::cerr << "recorded " << rec.json << " and " << rec.markdown << "\n";
    std::cerr << (rec.plotted ? "recorded " + rec.svg
                              : "pagecheck bench: warning: no plot (" + rec.plot_error +
                                    "); draw it with tools/plot_bandwidth.py")
              << "\n";
  }
}

}  // namespace pagecheck::cli
