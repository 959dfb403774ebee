#pragma once
/// MANIFEST.json of a golden directory: every case, its parameters, its datasets' dtypes,
/// shapes and SHA-256, and the file's own SHA-256 and size.
#include <nlohmann/json.hpp>

#include <string>

#include "pagecheck/verify/golden_cases.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {

/// The case's parameters as JSON (what the manifest lists under "parameters"): its spec in
/// gen's JSON form.
nlohmann::json case_parameters(const GoldenCase& golden_case);

/// The manifest entry of a case whose file `file_path` holds `file`.
nlohmann::json manifest_entry(const GoldenCase& golden_case, const GoldenFile& file,
                              const std::string& file_path);

/// A complete manifest around `entries` (a JSON array, catalogue order).
nlohmann::json make_manifest(nlohmann::json entries);

/// Writes `manifest` to dir/MANIFEST.json through a temporary file and a rename, unless the file
/// already holds exactly that text. Returns true when it wrote.
bool write_manifest(const std::string& dir, const nlohmann::json& manifest);

/// Parses dir/MANIFEST.json; throws GoldenError naming it when missing or malformed.
nlohmann::json read_manifest(const std::string& dir);

/// Path of `name` inside `dir`.
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace pagecheck::verify::golden
