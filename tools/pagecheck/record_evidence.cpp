/// `verify --record` (see record_evidence.h).
#include "record_evidence.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "commands.h"
#include "pagecheck/bench/process.h"
#include "pagecheck/review/build_revision.h"
#include "pagecheck/review/built_sources.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/families.h"
#include "pagecheck/review/run_conditions.h"
#include "pagecheck/review/verification_from_run.h"

namespace pagecheck::cli {

void record_evidence(const std::string& repo, const verify::check::RunReport& report,
                     const review::GoldenRun& golden) {
  const auto units = review::load_family_sources(repo);
  const std::string file = (std::filesystem::path(repo) / review::kFamiliesFile).string();
  std::map<std::string, review::VerificationRecord> records;
  for (const auto& v : report.variants) {
    if (v.registry != "builtin" && v.registry != "plugin") continue;
    const review::FamilySources* unit =
        review::recording_unit_for(units, file, v.family, v.variant, v.registry == "builtin");
    if (unit == nullptr) {
      std::printf("not recorded: %s/%s (no entry of %s holds it)\n", v.family.c_str(),
                  v.variant.c_str(), file.c_str());
      continue;
    }
    review::VerificationRecord& r = records[unit->name];
    r.family = v.family;
    r.unit = unit->name == v.family ? "" : unit->name;
    r.variants.push_back(review::variant_verification(v, report.seed));
  }
  const review::SanitizerRun sanitizer = review::detect_sanitizer();
  const review::BuildRevision source = review::recording_revision(repo);
  const std::string revision = source.revision;
  const bool dirty = source.dirty;
  // Every unit's sources must be the ones this binary was built from, checked before any
  // record is written.
  for (auto& [unit, r] : records) {
    r.source_hash =
        review::working_tree_hash(repo, review::find_family(units, unit, "--record")).hash;
    const std::string mismatch =
        review::built_sources_mismatch(unit, review::built_source_hash(unit), r.source_hash, repo);
    if (!mismatch.empty()) throw UsageError("verify --record: " + mismatch);
  }
  for (auto& [unit, r] : records) {
    r.device = report.device;
    r.date = review::utc_now_iso8601();
    r.git_revision = revision;
    r.git_dirty = dirty;
    r.tool_version = bench::tool_version();
    r.golden = golden;
    r.sanitizer = sanitizer;
    std::printf(
        "recorded %s: %s%s\n", review::write_verification_record(repo, r).c_str(),
        r.summary().c_str(),
        r.quick() ? " (quick: fewer cases than a full run; review will not accept it)" : "");
  }
}

}  // namespace pagecheck::cli
