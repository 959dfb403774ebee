/// Lookups of the compiled-in source hashes (see built_sources.h).
#include "pagecheck/review/built_sources.h"

namespace pagecheck::review {

std::string built_source_hash(const std::string& unit) {
  for (const BuiltUnitHash& b : built_source_hashes()) {
    if (b.unit == unit) return b.hash;
  }
  return "";
}

std::string built_sources_mismatch(const std::string& unit, const std::string& built_hash,
                                   const std::string& tree_hash, const std::string& repo) {
  if (built_hash.empty() || built_hash == tree_hash) return "";
  return "this pagecheck was built from " + unit + " sources " + built_hash.substr(0, 12) +
         ", but " + repo + " holds " + tree_hash.substr(0, 12) +
         ": its kernels are not the repository's; rebuild it, or record from the checkout it " +
         "was built from";
}

}  // namespace pagecheck::review
