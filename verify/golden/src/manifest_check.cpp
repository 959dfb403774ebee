/// A loaded golden against its manifest entry: checksums and datasets (bad input on a
/// mismatch), then every metadata field (a failed check on a mismatch).
#include "manifest_check.h"

#include <filesystem>

#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden {

namespace fs = std::filesystem;

namespace {

/// A root attribute as JSON (null when absent).
nlohmann::json attr_json(const LoadedGolden& g, const std::string& name) {
  const auto it = g.raw.attrs.find(name);
  if (it == g.raw.attrs.end()) return nullptr;
  return std::visit([](const auto& v) { return nlohmann::json(v); }, it->second);
}

/// Appends the mismatches between `want` (the file) and `have` (the manifest) under `field`.
void compare_field(const std::string& field, const nlohmann::json& have, const nlohmann::json& want,
                   const LoadedGolden& g, const std::string& manifest,
                   std::vector<std::string>* lines) {
  const std::string head = fs::path(manifest).filename().string() + ": " + field + ": ";
  if (have.is_null()) {
    lines->push_back(head + "missing in the manifest (" + g.path + " says " + want.dump() + ")");
  } else if (want.is_null()) {
    lines->push_back(head + have.dump() + " in the manifest, not a field of " + g.path);
  } else if (have != want) {
    lines->push_back(head + have.dump() + " in the manifest, " + want.dump() + " in " + g.path);
  }
}

}  // namespace

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
    if (item.value("sha256", "") != attr_to_string(d.attrs.at("sha256")) ||
        item.value("dtype", "") != element_type_name(d.type) ||
        item.value("shape", std::vector<int64_t>{}) != d.dims) {
      throw GoldenError(g.path, d.path, "dtype, shape or SHA-256 differs from MANIFEST.json");
    }
  }
}

nlohmann::json metadata_of(const LoadedGolden& g) {
  nlohmann::json m;
  m["name"] = attr_json(g, "case_name");
  m["file"] = fs::path(g.path).filename().string();
  m["family"] = attr_json(g, "family");
  m["dtype"] = attr_json(g, "dtype");
  m["description"] = attr_json(g, "description");
  m["seed"] = attr_json(g, "seed");
  std::error_code ec;
  const auto bytes = fs::file_size(g.path, ec);
  m["file_bytes"] = ec ? nlohmann::json(nullptr) : nlohmann::json(static_cast<int64_t>(bytes));
  // The spec the file holds, in the manifest's form (gen's JSON).
  const nlohmann::json spec = attr_json(g, "spec");
  nlohmann::json p = spec;
  if (spec.is_string()) {
    p = nlohmann::json::parse(spec.get<std::string>(), nullptr, false);
    if (p.is_discarded()) p = spec;
  }
  m["parameters"] = p;
  return m;
}

std::vector<std::string> metadata_mismatches(const LoadedGolden& g, const nlohmann::json& entry,
                                             const std::string& manifest) {
  std::vector<std::string> lines;
  const nlohmann::json want = metadata_of(g);
  const auto have = [&](const nlohmann::json& object, const std::string& key) {
    return object.is_object() && object.contains(key) ? object.at(key) : nlohmann::json(nullptr);
  };
  for (const auto& [key, value] : want.items()) {
    if (key != "parameters") compare_field(key, have(entry, key), value, g, manifest, &lines);
  }
  const nlohmann::json params = have(entry, "parameters");
  if (!params.is_object()) {
    compare_field("parameters", params.is_null() ? params : nlohmann::json("(not an object)"),
                  want.at("parameters"), g, manifest, &lines);
    return lines;
  }
  for (const auto& [key, value] : want.at("parameters").items()) {
    compare_field("parameters." + key, have(params, key), value, g, manifest, &lines);
  }
  for (const auto& [key, value] : params.items()) {
    if (!want.at("parameters").contains(key)) {
      compare_field("parameters." + key, value, nullptr, g, manifest, &lines);
    }
  }
  return lines;
}

}  // namespace pagecheck::verify::golden
