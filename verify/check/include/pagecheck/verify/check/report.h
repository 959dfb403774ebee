#pragma once
/// Verification reports: per variant counts, regime and edge-case distributions, worst error,
/// time, and the shrunk counterexample; JSON for machines, a table for people; shard reports
/// merge into one.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/verify/check/case_result.h"
#include "pagecheck/verify/check/devices.h"
#include "pagecheck/verify/check/shard.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify::check {

/// Schema of the JSON report.
inline constexpr const char* kReportSchema = "pagecheck.verify.report/1";

/// The smallest failing case found for a variant.
struct FailureInfo {
  int64_t case_index = -1;                ///< index of the first failing case (before shrinking)
  nlohmann::json spec;                    ///< shrunk spec (gen::spec_to_json)
  std::string spec_text;                  ///< shrunk spec, readable block
  std::string original_summary;           ///< one-line summary of the unshrunk failing case
  Outcome outcome = Outcome::kIncorrect;  ///< outcome of the shrunk case
  std::string message;                    ///< its message
  nlohmann::json comparison;              ///< its comparison details
  std::string rc_id;                      ///< generator id (encodes variant, size, large)
  std::string reproduce;                  ///< one-line spec JSON for `verify --reproduce-spec`
  std::string artifact;                   ///< HDF5 artefact path ("" when none)
  int shrink_steps = 0;                   ///< cases run while shrinking
  double shrink_seconds = 0;              ///< time spent shrinking
  double seconds_to_find = 0;             ///< from the variant's first case to the first failure
  int64_t shrunk_size = 0;                ///< gen::spec_size of the shrunk case
  bool shrink_budget_hit = false;         ///< shrinking stopped at the time budget
  bool reproduced = true;                 ///< the shrink run saw the failure again (false: flaky)
};

/// One variant's results.
struct VariantReport {
  std::string registry;  ///< "builtin", "planted", "plugin", "sim"
  std::string family;    ///< family name
  std::string variant;   ///< variant name
  /// The precision model that judged the variant's attention cases: its declaration (strict
  /// float32 when it declares nothing). Empty for the copy families (bit-exact) and for a
  /// declaration that is invalid (the variant is then refused: see error_messages).
  std::optional<PrecisionModel> precision;
  int64_t planned = 0;                      ///< cases of this shard
  int64_t run = 0;                          ///< cases run (stops after the first failure)
  int64_t passed = 0;                       ///< passed
  int64_t failed = 0;                       ///< kernel failures (counterexamples)
  int64_t not_supported = 0;                ///< refused by the variant
  int64_t errors = 0;                       ///< harness errors
  std::vector<std::string> error_messages;  ///< first few harness errors
  std::map<std::string, int64_t> regimes;   ///< regime -> cases
  std::map<std::string, int64_t> tags;      ///< edge-case tag -> cases
  /// Every tag the variant's caps can reach (gen::all_edge_tags; empty in reports written
  /// before it existed), for the "never hit" list.
  std::vector<std::string> possible_tags;
  std::map<std::string, int64_t> outcomes;  ///< outcome -> cases
  int64_t runs_twice = 0;                   ///< cases run twice (the determinism check)
  double max_ratio = 0;                ///< attention: worst error / tolerance among passing cases
  double max_abs = 0;                  ///< attention: worst absolute error among passing cases
  double seconds = 0;                  ///< wall time of this variant's cases (sum of case times)
  std::vector<int> shards;             ///< shard indices merged into this report
  std::optional<FailureInfo> failure;  ///< the counterexample, if any

  /// True when no kernel failure, no harness error and at least half the cases ran.
  bool ok() const;
};

/// A whole run (or merged shards).
struct RunReport {
  uint64_t seed = 0;                    ///< run seed
  int cases = 0;                        ///< cases per variant (before sharding)
  int shard_count = 1;                  ///< N of --shard I/N
  std::vector<int> shards;              ///< shard indices included
  std::string device;                   ///< device description
  double wall_seconds = 0;              ///< wall time (max over merged shards)
  std::vector<VariantReport> variants;  ///< per variant
  std::vector<std::string> notes;       ///< e.g. "no GPU: ..."
  /// The plugin libraries the run loaded (absolute paths), for the reproduce lines.
  std::vector<std::string> plugins;
  bool interrupted = false;  ///< stopped early (SIGINT): counts are partial
  /// The pagecheck that ran it ("pagecheck 0.1.0"; empty in reports written before it was
  /// kept): shards of one run must agree.
  std::string tool_version;
  /// Per GPU when the run used several (`--devices`); empty for a one-device run.
  std::vector<DeviceReport> devices;

  /// 0 all pass, 1 a counterexample or refused cases, 3 harness errors only.
  int exit_code() const;
};

void to_json(nlohmann::json& j, const FailureInfo& f);
void from_json(const nlohmann::json& j, FailureInfo& f);
void to_json(nlohmann::json& j, const VariantReport& v);
void from_json(const nlohmann::json& j, VariantReport& v);
void to_json(nlohmann::json& j, const RunReport& r);
/// Throws std::invalid_argument when the schema or a field is wrong.
void from_json(const nlohmann::json& j, RunReport& r);

/// Merges shard reports of one run (same seed, cases, shard count and pagecheck version;
/// distinct shards). Counts, distributions and per-device counts add; the failure with the
/// lowest case index wins. `names` (the files, in the same order; "report N" when absent)
/// name the reports in errors. Throws std::invalid_argument naming the report and the field
/// that differs from the first report's. Notes say which shards are missing.
RunReport merge_reports(const std::vector<RunReport>& reports,
                        const std::vector<std::string>& names = {});

/// The human summary: one table row per variant (variant, cases, passed, regimes, edge cases
/// hit, max error, time), the per-device table of a multi-device run, then each
/// counterexample in a readable block.
void print_summary(std::ostream& out, const RunReport& report);

/// One variant's counterexample block (COUNTEREXAMPLE line, shrunk layout, message,
/// reproduce line with the run's --plugin paths, artefact); nothing when the variant has no
/// failure.
void print_counterexample(std::ostream& out, const VariantReport& variant, const RunReport& run);

/// Reads a report file; throws std::invalid_argument naming the file.
RunReport read_report(const std::string& path);
/// Writes a report file through a temporary file; throws std::runtime_error naming the file.
void write_report(const std::string& path, const RunReport& report);

}  // namespace pagecheck::verify::check
