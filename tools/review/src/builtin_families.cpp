/// Checks of kernels/families.json against the kernel families pagecheck implements (see
/// families.h: holds_builtin_kernels, check_builtin_families).
#include <algorithm>
#include <filesystem>

#include "pagecheck/review/families.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

bool holds_builtin_kernels(const std::string& repo, const std::vector<FamilySources>& units) {
  if (std::any_of(units.begin(), units.end(),
                  [](const FamilySources& u) { return u.variants.empty(); })) {
    return true;
  }
  return !resolve_sources(repo, {"kernels/src/builtin_variants.*"}).empty();
}

void check_builtin_families(const std::string& repo, const std::vector<FamilySources>& units,
                            const std::vector<std::string>& kernel_families) {
  if (kernel_families.empty()) return;
  const std::string file = (fs::path(repo) / kFamiliesFile).string();
  std::string known;
  for (const auto& f : kernel_families) known += (known.empty() ? "" : ", ") + f;
  for (const auto& u : units) {
    if (std::find(kernel_families.begin(), kernel_families.end(), u.kernel_family()) ==
        kernel_families.end()) {
      throw EvidenceError(file + ": entry '" + u.name + "' names kernel family '" +
                          u.kernel_family() + "', which pagecheck does not implement (" + known +
                          ")");
    }
  }
  if (!holds_builtin_kernels(repo, units)) return;  // a plugin's repository
  for (const auto& family : kernel_families) {
    const bool held = std::any_of(units.begin(), units.end(), [&](const FamilySources& u) {
      return u.kernel_family() == family && u.variants.empty();
    });
    if (!held) {
      throw EvidenceError(file + ": no entry holds the built-in " + family +
                          " variants; this repository holds pagecheck's built-in kernels, so "
                          "every built-in family needs an entry without \"variants\" "
                          "(docs/review.md)");
    }
  }
}

}  // namespace pagecheck::review
