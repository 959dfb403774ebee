/// Evidence units of recorded variants (see record_units.h).
#include "record_units.h"

#include <filesystem>
#include <set>

#include "commands.h"
#include "pagecheck/registry.h"
#include "pagecheck/review/built_sources.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/families.h"

namespace pagecheck::cli {

std::vector<review::FamilySources> check_record_units(const std::string& repo,
                                                      const std::vector<std::string>& plugins,
                                                      const std::string& family,
                                                      const std::string& variant) {
  const auto units = review::load_family_sources(repo);
  const std::string file = (std::filesystem::path(repo) / review::kFamiliesFile).string();
  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const auto& p : plugins) registry.load_plugin(p);
  int recorded = 0, selected = 0;
  std::vector<review::FamilySources> builtin;  // units of the selected built-in variants
  std::set<std::string> seen;
  for (const auto& v : registry.variants()) {
    const std::string f = family_name(v->variant.family);
    if (!family.empty() && f != family) continue;
    if (!variant.empty() && v->name != variant) continue;
    ++selected;
    const bool is_builtin = v->origin == "builtin";
    const review::FamilySources* unit =
        review::recording_unit_for(units, file, f, v->name, is_builtin);
    recorded += unit != nullptr;
    if (unit != nullptr && is_builtin && seen.insert(unit->name).second) builtin.push_back(*unit);
  }
  if (selected > 0 && recorded == 0) {
    throw UsageError("--record: no selected variant has an entry in " + file +
                     " (nothing would be recorded)");
  }
  return builtin;
}

void check_record_sources(const std::string& repo,
                          const std::vector<review::FamilySources>& units) {
  for (const review::FamilySources& unit : units) {
    const std::string mismatch =
        review::built_sources_mismatch(unit.name, review::built_source_hash(unit.name),
                                       review::working_tree_hash(repo, unit).hash, repo);
    if (!mismatch.empty()) throw UsageError("--record: " + mismatch);
  }
}

}  // namespace pagecheck::cli
