/// Evidence units of recorded variants (see record_units.h).
#include "record_units.h"

#include <filesystem>

#include "commands.h"
#include "pagecheck/registry.h"

namespace pagecheck::cli {

void check_record_units(const std::string& repo, const std::vector<std::string>& plugins,
                        const std::string& family, const std::string& variant) {
  const auto units = review::load_family_sources(repo);
  const std::string file = (std::filesystem::path(repo) / review::kFamiliesFile).string();
  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const auto& p : plugins) registry.load_plugin(p);
  int recorded = 0, selected = 0;
  for (const auto& v : registry.variants()) {
    const std::string f = family_name(v->variant.family);
    if (!family.empty() && f != family) continue;
    if (!variant.empty() && v->name != variant) continue;
    ++selected;
    recorded +=
        review::recording_unit_for(units, file, f, v->name, v->origin == "builtin") != nullptr;
  }
  if (selected > 0 && recorded == 0) {
    throw UsageError("--record: no selected variant has an entry in " + file +
                     " (nothing would be recorded)");
  }
}

}  // namespace pagecheck::cli
