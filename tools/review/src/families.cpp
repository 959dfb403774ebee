/// Family source declarations and glob resolution.
#include "pagecheck/review/families.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pagecheck/bench/json_fields.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

bool glob_inside_repository(const std::string& pattern) {
  if (pattern.empty() || pattern[0] == '/') return false;
  std::size_t start = 0;
  while (start <= pattern.size()) {
    const std::size_t end = std::min(pattern.find('/', start), pattern.size());
    if (pattern.compare(start, end - start, "..") == 0) return false;
    start = end + 1;
  }
  return true;
}

std::vector<FamilySources> parse_family_sources(const std::string& text,
                                                const std::string& origin) {
  const nlohmann::json j = json_fields::parse<EvidenceError>(text, origin);
  if (!j.is_object() || !j.contains("families") || !j["families"].is_array()) {
    throw EvidenceError(origin + ": expected an object with a 'families' array");
  }
  if (!j.contains("schema")) {
    throw EvidenceError(origin + ": missing 'schema' (must be \"" + kFamiliesSchema + "\")");
  }
  if (!j["schema"].is_string() || j["schema"].get<std::string>() != kFamiliesSchema) {
    throw EvidenceError(origin + ": unknown schema " + j["schema"].dump() + " (must be \"" +
                        kFamiliesSchema + "\")");
  }
  if (j["families"].empty()) {
    throw EvidenceError(origin + ": 'families' is empty: no kernel source is tied to evidence");
  }
  std::vector<FamilySources> out;
  for (std::size_t i = 0; i < j["families"].size(); ++i) {
    const auto& f = j["families"][i];
    const std::string where = origin + ": families[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) {
      throw EvidenceError(where + ": missing string field 'name'");
    }
    if (!f.contains("sources") || !f["sources"].is_array() || f["sources"].empty()) {
      throw EvidenceError(where + ": 'sources' must be a non-empty array of globs");
    }
    FamilySources fs_;
    fs_.name = f["name"].get<std::string>();
    if (fs_.name.empty() || fs_.name.find('/') != std::string::npos) {
      throw EvidenceError(where + ": 'name' must be a non-empty file name (no '/')");
    }
    for (const auto& p : f["sources"]) {
      if (!p.is_string() || p.get<std::string>().empty()) {
        throw EvidenceError(where + ": each source must be a relative glob string");
      }
      if (!glob_inside_repository(p.get<std::string>())) {
        throw EvidenceError(where + ": source glob '" + p.get<std::string>() +
                            "' reaches outside the repository (absolute, or a '..' component)");
      }
      fs_.patterns.push_back(p.get<std::string>());
    }
    if (f.contains("family")) {
      if (!f["family"].is_string() || f["family"].get<std::string>().empty()) {
        throw EvidenceError(where + ": 'family' must be a non-empty string");
      }
      fs_.family = f["family"].get<std::string>();
    }
    if (f.contains("variants")) {
      if (!f["variants"].is_array() || f["variants"].empty()) {
        throw EvidenceError(where + ": 'variants' must be a non-empty array of variant names");
      }
      for (const auto& v : f["variants"]) {
        if (!v.is_string() || v.get<std::string>().empty()) {
          throw EvidenceError(where + ": each variant must be a non-empty string");
        }
        const std::string name = v.get<std::string>();
        if (std::find(fs_.variants.begin(), fs_.variants.end(), name) != fs_.variants.end()) {
          throw EvidenceError(where + ": variant '" + name + "' listed twice");
        }
        fs_.variants.push_back(name);
      }
    }
    for (const auto& seen : out) {
      if (seen.name == fs_.name) throw EvidenceError(where + ": duplicate name '" + fs_.name + "'");
      if (seen.kernel_family() != fs_.kernel_family()) continue;
      if (seen.variants.empty() && fs_.variants.empty()) {
        throw EvidenceError(where + ": '" + seen.name + "' already holds the built-in " +
                            fs_.kernel_family() + " variants; give this entry 'variants'");
      }
      for (const auto& v : fs_.variants) {
        if (std::find(seen.variants.begin(), seen.variants.end(), v) != seen.variants.end()) {
          throw EvidenceError(where + ": variant '" + v + "' is already held by '" + seen.name +
                              "'");
        }
      }
    }
    out.push_back(std::move(fs_));
  }
  return out;
}

std::vector<FamilySources> load_family_sources(const std::string& repo) {
  const std::string path = (fs::path(repo) / kFamiliesFile).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw EvidenceError(path +
                        ": cannot open the family source list (is --repo the pagecheck "
                        "repository root?)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_family_sources(text.str(), path);
}

const FamilySources& find_family(const std::vector<FamilySources>& families,
                                 const std::string& family, const std::string& origin) {
  for (const auto& f : families) {
    if (f.name == family) return f;
  }
  std::string known;
  for (const auto& f : families) known += (known.empty() ? "" : ", ") + f.name;
  throw EvidenceError(origin + ": no family '" + family + "' (it lists: " + known + ")");
}

const FamilySources* evidence_unit_for(const std::vector<FamilySources>& units,
                                       const std::string& family, const std::string& variant,
                                       bool builtin) {
  for (const auto& u : units) {
    if (u.kernel_family() == family &&
        std::find(u.variants.begin(), u.variants.end(), variant) != u.variants.end()) {
      return &u;
    }
  }
  if (!builtin) return nullptr;
  for (const auto& u : units) {
    if (u.kernel_family() == family && u.variants.empty()) return &u;
  }
  return nullptr;
}

const FamilySources* recording_unit_for(const std::vector<FamilySources>& units,
                                        const std::string& families_file, const std::string& family,
                                        const std::string& variant, bool builtin) {
  const FamilySources* unit = evidence_unit_for(units, family, variant, builtin);
  if (unit == nullptr && !builtin) {
    throw EvidenceError(families_file + ": plugin variant " + family + "/" + variant +
                        " has no entry; add {\"name\": \"<unit>\", \"family\": \"" + family +
                        "\", \"variants\": [\"" + variant +
                        "\"], \"sources\": [<globs of its kernel sources>]} (docs/plugins.md)");
  }
  return unit;
}

bool path_matches(const std::string& pattern, const std::string& path) {
  return fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0;
}

std::vector<std::string> match_paths(const std::vector<std::string>& patterns,
                                     const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    for (const auto& p : patterns) {
      if (path_matches(p, c)) {
        out.push_back(c);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> resolve_sources(const std::string& repo,
                                         const std::vector<std::string>& patterns) {
  std::vector<std::string> candidates;
  const fs::path root(repo);
  for (const auto& pattern : patterns) {
    // Walk only the pattern's literal directory prefix.
    const auto wild = pattern.find_first_of("*?[");
    const std::string literal = pattern.substr(0, wild);
    const auto slash = literal.rfind('/');
    const fs::path dir = root / (slash == std::string::npos ? "" : literal.substr(0, slash));
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (it->is_directory(ec) && (name == ".git" || name.rfind("build", 0) == 0)) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;
      candidates.push_back(fs::relative(it->path(), root, ec).generic_string());
    }
  }
  return match_paths(patterns, candidates);
}

std::string find_repo_root(const std::string& start, const std::string& fallback) {
  return verify::find_repo_root(start, kFamiliesFile).value_or(fallback);
}

}  // namespace pagecheck::review
