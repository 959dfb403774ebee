#pragma once
/// `pagecheck verify --dry-run`: what a run would test, without a GPU and without worker
/// processes: every case of the run drawn from its seed, the tag and regime histogram per
/// variant printed, and (with --json FILE) every case's spec written.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/verify/check/shard.h"
#include "pagecheck/verify/check/verifier.h"

namespace pagecheck::cli {

/// The variants a run would verify, from this process's registries: the built-in ones and
/// those of `plugins` (or, with `simulate`, the CPU simulations), keeping those that match
/// `kernel` and `variant` (empty: all). Throws UsageError when none matches or a plugin does
/// not load.
std::vector<verify::check::Target> dry_run_targets(bool simulate,
                                                   const std::vector<std::string>& plugins,
                                                   const std::string& kernel,
                                                   const std::string& variant);

/// What a dry run draws.
struct DryRunOptions {
  uint64_t seed = 1;           ///< run seed
  int cases = 200;             ///< cases per variant
  verify::check::Shard shard;  ///< the shard's cases only
  std::string json_path;       ///< --json FILE ("": none)
};

/// The dry run as JSON: {"schema": "pagecheck.dry_run/1", "seed", "cases", "shard",
/// "variants": [{"registry", "family", "variant", "caps", "regimes": {name: count},
/// "tags": {tag: count}, "never_hit": [tag], "cases": [{"case", "size", "large", "tags",
/// "spec"}]}]}; each "spec" is the spec JSON that --reproduce-spec takes.
nlohmann::json dry_run_json(const std::vector<verify::check::Target>& targets,
                            const DryRunOptions& options);

/// Draws every case, prints the histogram per variant and writes the JSON to
/// options.json_path (atomically); returns exit status 0.
int run_dry_run(const std::vector<verify::check::Target>& targets, const DryRunOptions& options);

}  // namespace pagecheck::cli
