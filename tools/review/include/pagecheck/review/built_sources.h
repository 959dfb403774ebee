#pragma once
/// The content hashes of the kernel sources this binary was BUILT from, one per built-in
/// evidence unit of kernels/families.json (the units without "variants": a plugin's unit is
/// built elsewhere), compiled in at build time by pagecheck_source_hashes. A record or a
/// report then names the kernels that ran, and a binary built from other sources than the
/// repository it runs in (an older build, a tree edited since) cannot file evidence under the
/// repository's hash.
#include <string>
#include <vector>

namespace pagecheck::review {

/// One built-in unit's hash at build time.
struct BuiltUnitHash {
  std::string unit;  ///< unit name, e.g. "gather_cached_kv"
  std::string hash;  ///< content_hash of its sources (hex) when the binary was built
};

/// Every built-in unit's hash at build time (generated source; empty outside the build).
const std::vector<BuiltUnitHash>& built_source_hashes();

/// The build-time hash of `unit`, or "" when the binary does not know it (a plugin's unit).
std::string built_source_hash(const std::string& unit);

/// "" when this binary may record evidence of `unit` whose sources in `repo` hash to
/// `tree_hash` (the built hash is unknown, or equal); else the error, naming the unit, both
/// hashes and the repository.
std::string built_sources_mismatch(const std::string& unit, const std::string& built_hash,
                                   const std::string& tree_hash, const std::string& repo);

}  // namespace pagecheck::review
