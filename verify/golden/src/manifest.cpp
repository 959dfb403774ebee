/// MANIFEST.json: writing and reading (with its entries' paths kept inside the directory).
#include "manifest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "golden_schema.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden {

namespace fs = std::filesystem;

std::string join_path(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

nlohmann::json case_parameters(const GoldenCase& c) {
  return gen::spec_to_json(c.spec);
}

nlohmann::json manifest_entry(const GoldenCase& c, const GoldenFile& file,
                              const std::string& file_path) {
  nlohmann::json entry;
  entry["name"] = c.name;
  entry["file"] = c.name + ".h5";
  entry["family"] = family_name(gen::family_of(c.spec));
  entry["dtype"] = dtype_name(std::visit([](const auto& s) { return s.dtype; }, c.spec));
  entry["description"] = c.description;
  entry["seed"] = std::visit([](const auto& s) { return s.content_seed; }, c.spec);
  entry["parameters"] = case_parameters(c);
  entry["file_sha256"] = sha256_file_hex(file_path);
  entry["file_bytes"] = static_cast<int64_t>(fs::file_size(file_path));
  nlohmann::json datasets = nlohmann::json::object();
  for (const GoldenDataset& d : file.datasets) {
    nlohmann::json item;
    item["dtype"] = element_type_name(d.type);
    item["shape"] = d.dims;
    const auto sha = d.attrs.find("sha256");
    item["sha256"] = sha == d.attrs.end() ? std::string() : attr_to_string(sha->second);
    datasets[d.path] = item;
  }
  entry["datasets"] = datasets;
  return entry;
}

nlohmann::json make_manifest(nlohmann::json entries) {
  nlohmann::json manifest;
  manifest["schema_version"] = kSchemaVersion;
  manifest["reference_version"] = kReferenceVersion;
  manifest["generator_version"] = kGeneratorVersion;
  int64_t total = 0;
  for (const auto& entry : entries) total += entry.at("file_bytes").get<int64_t>();
  manifest["total_bytes"] = total;
  manifest["cases"] = std::move(entries);
  return manifest;
}

bool write_manifest(const std::string& dir, const nlohmann::json& manifest) {
  const std::string path = join_path(dir, kManifestName);
  const std::string text = manifest.dump(2) + "\n";
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream old;
    old << in.rdbuf();
    if (old.str() == text) return false;
  }
  verify::write_file_atomically(path, text);
  return true;
}

namespace {

/// Throws GoldenError naming the entry when its `file` is empty, absolute or has a `..`
/// component (it would name a file outside the golden directory).
void check_entry_file(const std::string& manifest, std::size_t index, const std::string& file) {
  const fs::path p(file);
  bool parent = false;
  for (const fs::path& part : p) parent = parent || part == "..";
  if (file.empty() || p.is_absolute() || p.has_root_name() || parent) {
    throw GoldenError(manifest, "cases[" + std::to_string(index) + "].file",
                      "'" + file +
                          "' is not a path inside the golden directory (absolute paths and "
                          "'..' are refused)");
  }
}

}  // namespace

nlohmann::json read_manifest(const std::string& dir) {
  const std::string path = join_path(dir, kManifestName);
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    throw GoldenError(path, "", "not a regular file (a directory?)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GoldenError(path, "", "cannot read the manifest (missing?)");
  nlohmann::json manifest;
  try {
    in >> manifest;
    const std::string version_problem =
        schema_version_problem(manifest.at("schema_version").get<int64_t>());
    if (!version_problem.empty()) throw GoldenError(path, "schema_version", version_problem);
    std::size_t index = 0;
    for (const auto& entry : manifest.at("cases")) {
      (void)entry.at("name").get<std::string>();
      check_entry_file(path, index++, entry.at("file").get<std::string>());
      (void)entry.at("file_sha256").get<std::string>();
      (void)entry.at("datasets").items();
    }
  } catch (const nlohmann::json::exception& e) {
    throw GoldenError(path, "", std::string("malformed manifest: ") + e.what());
  }
  return manifest;
}

std::vector<std::string> list_goldens(const std::string& dir) {
  // Keep the manifest alive while iterating: a range-for over read_manifest(dir).at("cases")
  // would walk an array inside a destroyed temporary (it yielded no cases at all).
  const nlohmann::json manifest = read_manifest(dir);
  std::vector<std::string> paths;
  for (const auto& entry : manifest.at("cases")) {
    paths.push_back(join_path(dir, entry.at("file").get<std::string>()));
  }
  return paths;
}

}  // namespace pagecheck::verify::golden
