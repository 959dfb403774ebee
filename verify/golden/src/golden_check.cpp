/// `pagecheck golden check`: every golden reloads, matches the manifest and its definition, and
/// the reference reproduces its outputs.
#include <filesystem>
#include <ostream>
#include <set>

#include "golden_compare.h"
#include "manifest.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/golden_tools.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden {
namespace {

/// Relative (max-norm) tolerance of float64 outputs between reference runs; see
/// docs/fixtures.md.
constexpr double kFloat64Tolerance = 1e-12;

/// Throws GoldenError when the file or one of its datasets disagrees with its manifest entry.
void check_against_manifest(const LoadedGolden& g, const nlohmann::json& entry) {
  const std::string sha = sha256_file_hex(g.path);
  if (sha != entry.at("file_sha256").get<std::string>()) {
    throw GoldenError(g.path, "",
                      "file SHA-256 " + sha + " differs from MANIFEST.json (" +
                          entry.at("file_sha256").get<std::string>() + ")");
  }
  const auto& listed = entry.at("datasets");
  if (listed.size() != g.raw.datasets.size()) {
    throw GoldenError(g.path, "",
                      "MANIFEST.json lists " + std::to_string(listed.size()) +
                          " datasets, the file holds " + std::to_string(g.raw.datasets.size()));
  }
  for (const GoldenDataset& d : g.raw.datasets) {
    if (!listed.contains(d.path)) throw GoldenError(g.path, d.path, "not in MANIFEST.json");
    const auto& item = listed.at(d.path);
    if (item.at("sha256").get<std::string>() != attr_to_string(d.attrs.at("sha256")) ||
        item.at("dtype").get<std::string>() != element_type_name(d.type) ||
        item.at("shape").get<std::vector<int64_t>>() != d.dims) {
      throw GoldenError(g.path, d.path, "dtype, shape or SHA-256 differs from MANIFEST.json");
    }
  }
}

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

/// Attributes and inputs regenerated from the catalogue against the file's.
void check_definition(const LoadedGolden& g, std::vector<std::string>* failures) {
  const GoldenFile fresh = build_golden(find_case(g.name));
  for (const std::string& line : describe_differences(g.raw, fresh)) {
    if (line.rfind("expected/", 0) == 0) continue;  // outputs: checked against the reference
    failures->push_back("differs from its definition (A = file, B = regenerated): " + line);
  }
}

}  // namespace

int check_goldens(const std::string& dir, std::ostream& out) {
  int bad = 0;
  int failed = 0;
  nlohmann::json manifest;
  try {
    manifest = read_manifest(dir);
  } catch (const GoldenError& e) {
    out << "BAD  " << e.what() << "\n";
    return 2;
  }
  const auto fail = [&](const std::string& what) {
    out << "FAIL " << what << "\n";
    ++failed;
  };
  if (manifest.value("reference_version", "") != kReferenceVersion ||
      manifest.value("generator_version", int64_t{-1}) != kGeneratorVersion) {
    fail(std::string(kManifestName) +
         ": reference/generator version differs from this build "
         "(regenerate with `pagecheck golden regen --force`)");
  }
  std::set<std::string> listed;
  for (const auto& entry : manifest.at("cases")) {
    const std::string name = entry.at("name").get<std::string>();
    listed.insert(entry.at("file").get<std::string>());
    std::vector<std::string> failures;
    try {
      const LoadedGolden g = load_golden(join_path(dir, entry.at("file").get<std::string>()));
      check_against_manifest(g, entry);
      if (g.name != name) throw GoldenError(g.path, "attribute case_name", "is not " + name);
      try {
        (void)find_case(name);
        check_definition(g, &failures);
      } catch (const std::invalid_argument& e) {
        failures.push_back(e.what());
      }
      check_outputs(g, &failures);
    } catch (const GoldenError& e) {
      out << "BAD  " << e.what() << "\n";
      ++bad;
      continue;
    }
    if (failures.empty()) {
      out << "ok   " << name << "\n";
    } else {
      fail(name + ":");
      for (const std::string& line : failures) out << "       " << line << "\n";
    }
  }
  for (const CaseDefinition& def : case_catalogue()) {
    if (listed.count(def.name + ".h5") == 0)
      fail(def.name + ": in the catalogue, not in the manifest");
  }
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = item.path().filename().string();
    if (item.path().extension() == ".h5" && listed.count(file) == 0) {
      fail(item.path().string() + ": not listed in " + kManifestName);
    }
  }
  out << manifest.at("cases").size() << " golden(s): " << bad << " bad, " << failed << " failed\n";
  return bad > 0 ? 2 : failed > 0 ? 1 : 0;
}

}  // namespace pagecheck::verify::golden
