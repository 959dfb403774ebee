/// `pagecheck list`: every registered kernel variant by family, with its description, dtypes,
/// cache dtypes and layouts, head and block sizes, capabilities, query lengths, context-0
/// behaviour, split-K partitions, determinism and origin (built-in or plugin path).
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::cli {

namespace gen = verify::gen;
namespace {

struct ListOptions {
  bool json = false;                 ///< print JSON instead of the table
  std::vector<std::string> plugins;  ///< plugin shared libraries to load first
  std::string family;                ///< only this family (empty: all)
};

std::vector<std::string> dtype_names(const std::vector<DType>& dtypes) {
  std::vector<std::string> out;
  for (DType d : dtypes) out.emplace_back(dtype_name(d));
  return out;
}

template <typename T>
std::string joined(const std::vector<T>& items) {
  std::ostringstream os;
  for (std::size_t i = 0; i < items.size(); ++i) os << (i ? " " : "") << items[i];
  return items.empty() ? "-" : os.str();
}

/// A variant as `list --json` prints it: its declaration (gen::VariantCaps' JSON form) with
/// the flags by name, the description and where it came from.
nlohmann::json to_json(const VariantInfo& v) {
  nlohmann::json j = gen::caps_of(v);
  j["caps"] = gen::cap_names(v.variant.caps);
  j["caps_bits"] = v.variant.caps;
  j.erase("cap_names");
  j["description"] = v.description;
  j["origin"] = v.origin;
  j["abi_version"] = v.abi_version;
  return j;
}

void print_table(const VariantRegistry& registry, const std::vector<pc_family>& families) {
  if (!builtin_kernels_available()) {
    std::cout << "this build has no CUDA support: no built-in kernels are compiled in "
                 "(rebuild with nvcc and PAGECHECK_ENABLE_CUDA=ON; plugins load with --plugin)\n";
  }
  for (pc_family f : families) {
    const auto variants = registry.family(f);
    std::cout << family_name(f) << " (" << variants.size() << " variant"
              << (variants.size() == 1 ? "" : "s") << ")\n";
    for (const VariantInfo* v : variants) {
      const gen::VariantCaps c = gen::caps_of(*v);
      const nlohmann::json j = c;
      std::cout << "  " << v->name << ": " << v->description << "\n"
                << "      dtypes: " << joined(dtype_names(c.dtypes)) << "\n      cache: dtypes "
                << (c.kv_dtypes.empty() ? std::string("as the tokens")
                                        : joined(dtype_names(c.kv_dtypes)))
                << ", layouts " << joined(j["cache_kinds"].get<std::vector<std::string>>())
                << ", fp8 scales " << joined(j["scale_kinds"].get<std::vector<std::string>>())
                << "\n      head sizes: " << joined(v->head_sizes)
                << "\n      block sizes: " << joined(v->block_sizes)
                << "\n      caps: " << joined(gen::cap_names(c.caps)) << "\n      queries: up to "
                << c.max_query_len << " tokens per sequence"
                << "; context 0: " << j["context0"].get<std::string>()
                << "\n      split-K partitions: " << joined(c.partition_sizes)
                << (c.nondeterministic ? "\n      nondeterministic" : "")
                << "\n      origin: " << v->origin << " (ABI v" << v->abi_version << ")\n";
    }
  }
}

int run_list(const ListOptions& options) {
  std::vector<pc_family> families(std::begin(kAllFamilies), std::end(kAllFamilies));
  if (!options.family.empty()) families = {parse_family(options.family)};
  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const std::string& path : options.plugins) {
    try {
      registry.load_plugin(path);
    } catch (const RegistryError& e) {
      throw UsageError(std::string("--plugin: ") + e.what());
    }
  }
  if (options.json) {
    nlohmann::json doc;
    doc["cuda_kernels"] = builtin_kernels_available();
    if (!builtin_kernels_available()) doc["note"] = "this build has no CUDA support";
    doc["variants"] = nlohmann::json::array();
    for (pc_family f : families) {
      for (const VariantInfo* v : registry.family(f)) doc["variants"].push_back(to_json(*v));
    }
    std::cout << doc.dump(2) << "\n";
  } else {
    print_table(registry, families);
  }
  return 0;
}

}  // namespace

void check_variant_filter(const std::string& kernel, const std::string& variant,
                          const std::vector<std::string>& plugins) {
  if (variant.empty()) return;
  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const std::string& path : plugins) registry.load_plugin(path);
  std::string all, in_family, other_family;
  for (pc_family f : kAllFamilies) {
    for (const VariantInfo* v : registry.family(f)) {
      const std::string name = std::string(family_name(f)) + "/" + v->name;
      all += (all.empty() ? "" : ", ") + name;
      if (!kernel.empty() && family_name(f) == kernel) {
        in_family += (in_family.empty() ? "" : ", ") + v->name;
      }
      if (v->name == variant) {
        if (kernel.empty() || family_name(f) == kernel) return;
        other_family += (other_family.empty() ? "" : " and ") + std::string(family_name(f));
      }
    }
  }
  if (!builtin_kernels_available()) return;  // built-in names unknown: cannot tell
  if (!other_family.empty()) {
    throw UsageError("--variant '" + variant + "' is a " + other_family + " variant, not " +
                     kernel + " (" + kernel +
                     " variants: " + (in_family.empty() ? "none" : in_family) + ")");
  }
  throw UsageError("--variant '" + variant +
                   "': no such variant (known: " + (all.empty() ? "none" : all) + ")");
}

void add_list_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* cmd = app.add_subcommand(
      "list", "List the registered kernel variants with the shapes and features they support");
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->add_option("--plugin", options->plugins,
                  "Also load this plugin shared library (repeatable)");
  cmd->add_option("--family", options->family,
                  "Only this family: paged_attention, gather_cached_kv or reshape_and_cache");
  cmd->callback([options, &exit_code] { exit_code = run_list(*options); });
}

}  // namespace pagecheck::cli
