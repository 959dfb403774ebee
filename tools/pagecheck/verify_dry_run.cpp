/// `pagecheck verify --dry-run`: the cases of a run, drawn in this process (no GPU, no worker).
#include "verify_dry_run.h"

#include <cstdio>
#include <map>
#include <memory>

#include "commands.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/gen/classify.h"

namespace pagecheck::cli {
namespace {

namespace check = verify::check;
namespace gen = verify::gen;

std::string counts_text(const std::map<std::string, int64_t>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) {
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(n);
  }
  return text.empty() ? "none" : text;
}

}  // namespace

std::vector<check::Target> dry_run_targets(bool simulate, const std::vector<std::string>& plugins,
                                           const std::string& kernel, const std::string& variant) {
  std::vector<check::Target> all;
  if (simulate) {
    const std::unique_ptr<check::CaseBackend> sim = check::make_sim_backend();
    for (const check::BackendVariant& v : sim->variants()) {
      all.push_back(check::Target{v.registry, v.caps});
    }
  } else {
    VariantRegistry builtin, loaded;
    register_builtin_kernels(builtin);
    for (const std::string& path : plugins) {
      try {
        loaded.load_plugin(path);
      } catch (const RegistryError& e) {
        throw UsageError(std::string("--plugin: ") + e.what());
      }
    }
    for (const auto& [name, registry] : {std::pair{"builtin", &builtin}, {"plugin", &loaded}}) {
      for (const auto& info : registry->variants()) {
        all.push_back(check::Target{name, gen::caps_of(*info)});
      }
    }
  }
  std::vector<check::Target> targets;
  std::string known;
  for (const check::Target& t : all) {
    const std::string family = family_name(t.caps.family);
    known += (known.empty() ? "" : ", ") + family + "/" + t.caps.name;
    if ((kernel.empty() || family == kernel) && (variant.empty() || t.caps.name == variant)) {
      targets.push_back(t);
    }
  }
  if (targets.empty()) {
    throw UsageError("no variant matches --kernel '" + kernel + "' --variant '" + variant +
                     "' (known: " + (known.empty() ? "none" : known) + ")");
  }
  return targets;
}

nlohmann::json dry_run_json(const std::vector<check::Target>& targets,
                            const DryRunOptions& options) {
  nlohmann::json doc{{"schema", "pagecheck.dry_run/1"},
                     {"seed", std::to_string(options.seed)},
                     {"cases", options.cases},
                     {"shard", options.shard.text()},
                     {"variants", nlohmann::json::array()}};
  for (const check::Target& t : targets) {
    std::map<std::string, int64_t> regimes, tags;
    nlohmann::json cases = nlohmann::json::array();
    for (int64_t i : options.shard.cases(options.cases)) {
      const check::CaseParams params = check::case_params(t, options.seed, options.cases, i);
      const gen::CaseSpec spec = check::generate_case(t, params);
      gen::validate(spec);  // a spec the generators should never draw is an internal error
      const std::vector<std::string> case_tags = gen::edge_tags(spec, t.caps);
      ++regimes[gen::regime_name(std::visit([](const auto& s) { return s.regime; }, spec))];
      for (const auto& tag : case_tags) ++tags[tag];
      cases.push_back({{"case", i},
                       {"size", params.size},
                       {"large", params.large},
                       {"tags", case_tags},
                       {"spec", gen::spec_to_json(spec)}});
    }
    nlohmann::json never = nlohmann::json::array();
    for (const auto& tag : gen::all_edge_tags(t.caps)) {
      if (!tags.count(tag)) never.push_back(tag);
    }
    doc["variants"].push_back({{"registry", t.registry},
                               {"family", family_name(t.caps.family)},
                               {"variant", t.caps.name},
                               {"caps", t.caps},
                               {"regimes", regimes},
                               {"tags", tags},
                               {"never_hit", never},
                               {"cases", std::move(cases)}});
  }
  return doc;
}

int run_dry_run(const std::vector<check::Target>& targets, const DryRunOptions& options) {
  const nlohmann::json doc = dry_run_json(targets, options);
  std::printf(
      "pagecheck verify --dry-run: seed %llu, %d cases per variant, shard %s; no case "
      "runs\n",
      static_cast<unsigned long long>(options.seed), options.cases, options.shard.text().c_str());
  for (const auto& v : doc["variants"]) {
    const auto counts = [](const nlohmann::json& j) {
      return j.get<std::map<std::string, int64_t>>();
    };
    const std::string registry = v["registry"].get<std::string>();
    const std::string name = v["family"].get<std::string>() + "/" +
                             v["variant"].get<std::string>() +
                             (registry == "builtin" ? "" : " [" + registry + "]");
    std::printf("  %s: %zu cases\n", name.c_str(), v["cases"].size());
    std::printf("         regimes: %s\n", counts_text(counts(v["regimes"])).c_str());
    std::printf("         edge cases: %s\n", counts_text(counts(v["tags"])).c_str());
    std::string never;
    for (const auto& tag : v["never_hit"]) never += " " + tag.get<std::string>();
    if (!never.empty()) std::printf("         never hit:%s\n", never.c_str());
  }
  if (!options.json_path.empty()) {
    verify::write_file_atomically(options.json_path, doc.dump(1) + "\n");
    std::printf("specs: %s\n", options.json_path.c_str());
  }
  return 0;
}

}  // namespace pagecheck::cli
