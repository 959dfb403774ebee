#pragma once
/// A loaded golden against its MANIFEST.json entry: checksums, datasets and every metadata
/// field (used by `pagecheck golden check`).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {

/// Throws GoldenError (bad input) when the file's SHA-256, or one of its datasets' dtype, shape
/// or SHA-256, disagrees with `entry`, or the entry lists other datasets than the file holds.
void check_against_manifest(const LoadedGolden& g, const nlohmann::json& entry);

/// What the file says for each metadata field of a manifest entry: name, file, family, dtype,
/// description, seed, file_bytes (the file's size) and parameters (the root attribute spec,
/// parsed), in the manifest's terms.
nlohmann::json metadata_of(const LoadedGolden& g);

/// One line per metadata field of `entry` that is missing or differs from metadata_of(g)
/// (parameters key by key, unknown keys included), naming `manifest`, the field and the file:
/// "MANIFEST.json: seed: 7 in the manifest, 6 in DIR/NAME.h5". Empty when all agree.
std::vector<std::string> metadata_mismatches(const LoadedGolden& g, const nlohmann::json& entry,
                                             const std::string& manifest);

}  // namespace pagecheck::verify::golden
