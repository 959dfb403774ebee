/// `pagecheck golden check`: every golden reloads, matches the manifest and its definition, and
/// the reference reproduces its outputs.
#include <filesystem>
#include <ostream>
#include <set>

#include "golden_compare.h"
#include "manifest.h"
#include "manifest_check.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {
namespace {

/// Relative (max-norm) tolerance of float64 outputs between reference runs; see
/// docs/fixtures.md.
constexpr double kFloat64Tolerance = 1e-12;

GoldenDataset like(const GoldenFile& file, const std::string& path, std::vector<std::byte> bytes) {
  GoldenDataset d = *file.find(path);
  d.bytes = std::move(bytes);
  return d;
}

/// Reference outputs recomputed from the loaded inputs against the recorded ones.
void check_outputs(const LoadedGolden& g, std::vector<std::string>* failures) {
  const auto bitwise = [&](const std::string& path, std::vector<std::byte> bytes) {
    const GoldenDataset* recorded = g.raw.find(path);
    const std::string diff = diff_values(*recorded, like(g.raw, path, std::move(bytes)));
    if (!diff.empty()) failures->push_back(path + " (bit for bit): " + diff);
  };
  if (g.family == PC_FAMILY_PAGED_ATTENTION) {
    const ref::PagedAttentionResult r = ref::paged_attention(g.attention);
    bitwise("expected/out", r.out_storage(g.dtype));
    const std::string out = compare_f64(g.expected_out_f64, r.out, kFloat64Tolerance);
    if (!out.empty()) failures->push_back("expected/out_f64: " + out);
    const std::string lse = compare_f64(g.expected_lse, r.lse, kFloat64Tolerance);
    if (!lse.empty()) failures->push_back("expected/lse: " + lse);
    return;
  }
  ref::CacheCopyProblem run = g.copy;
  if (g.family == PC_FAMILY_GATHER_CACHED_KV) {
    ref::gather_cached_kv(run);
    bitwise("expected/key", std::move(run.key));
    bitwise("expected/value", std::move(run.value));
  } else {
    ref::reshape_and_cache(run);
    bitwise("expected/key_cache", std::move(run.key_cache));
    bitwise("expected/value_cache", std::move(run.value_cache));
  }
}

/// Attributes (the spec among them) and inputs regenerated from the catalogue against the
/// file's.
void check_definition(const LoadedGolden& g, std::vector<std::string>* failures) {
  const GoldenFile fresh = build_golden(find_case(g.name));
  for (const std::string& line : describe_differences(g.raw, fresh)) {
    if (line.rfind("expected/", 0) == 0) continue;  // outputs: checked against the reference
    failures->push_back("differs from its definition (A = file, B = regenerated): " + line);
  }
}

}  // namespace

int check_goldens(const std::string& dir, std::ostream& out, CheckReport* report_out) {
  CheckReport local;
  CheckReport& report = report_out != nullptr ? *report_out : local;
  report = CheckReport{};
  report.dir = dir;
  nlohmann::json manifest;
  try {
    manifest = read_manifest(dir);
  } catch (const GoldenError& e) {
    out << "BAD  " << e.what() << "\n";
    report.manifest_bad = true;
    report.problems.push_back(e.what());
    return report.exit_code();
  }
  const std::string manifest_path = join_path(dir, kManifestName);
  const auto fail = [&](const std::string& what) {
    out << "FAIL " << what << "\n";
    report.problems.push_back(what);
    ++report.failed;
  };
  if (manifest.value("reference_version", "") != kReferenceVersion ||
      manifest.value("generator_version", int64_t{-1}) != kGeneratorVersion) {
    fail(std::string(kManifestName) +
         ": reference/generator version differs from this build "
         "(regenerate with `pagecheck golden regen --force`)");
  }
  std::set<std::string> listed;
  int64_t total_bytes = 0;
  for (const auto& entry : manifest.at("cases")) {
    CheckedCase checked;
    checked.name = entry.at("name").get<std::string>();
    checked.file = join_path(dir, entry.at("file").get<std::string>());
    listed.insert(entry.at("file").get<std::string>());
    total_bytes += entry.value("file_bytes", int64_t{0});
    std::vector<std::string>& failures = checked.messages;
    try {
      const LoadedGolden g = load_golden(checked.file);
      check_against_manifest(g, entry);
      if (g.name != checked.name) {
        throw GoldenError(g.path, "attribute case_name", "is not " + checked.name);
      }
      failures = metadata_mismatches(g, entry, manifest_path);
      try {
        (void)find_case(checked.name);
        check_definition(g, &failures);
      } catch (const std::invalid_argument& e) {
        failures.push_back(e.what());
      }
      check_outputs(g, &failures);
    } catch (const GoldenError& e) {
      out << "BAD  " << e.what() << "\n";
      checked.status = "bad";
      checked.messages = {e.what()};
      report.cases.push_back(std::move(checked));
      ++report.bad;
      continue;
    }
    if (failures.empty()) {
      out << "ok   " << checked.name << "\n";
      checked.status = "ok";
    } else {
      out << "FAIL " << checked.name << ":\n";
      for (const std::string& line : failures) out << "       " << line << "\n";
      checked.status = "failed";
      ++report.failed;
    }
    report.cases.push_back(std::move(checked));
  }
  const nlohmann::json recorded_total = manifest.value("total_bytes", nlohmann::json(nullptr));
  if (recorded_total != nlohmann::json(total_bytes)) {
    fail(manifest_path + ": total_bytes: " + recorded_total.dump() +
         " in the manifest, the entries' file_bytes add up to " + std::to_string(total_bytes));
  }
  for (const GoldenCase& c : case_catalogue()) {
    if (listed.count(c.name + ".h5") == 0) fail(c.name + ": in the catalogue, not in the manifest");
  }
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = item.path().filename().string();
    if (item.path().extension() == ".h5" && listed.count(file) == 0) {
      fail(item.path().string() + ": not listed in " + kManifestName);
    }
  }
  out << manifest.at("cases").size() << " golden(s): " << report.bad << " bad, " << report.failed
      << " failed\n";
  return report.exit_code();
}

}  // namespace pagecheck::verify::golden
