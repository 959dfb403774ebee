/// Report JSON, merging of shard reports, and the summary table.
#include "pagecheck/verify/check/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/decimal_u64.h"
#include "pagecheck/verify/gen/classify.h"

namespace pagecheck::verify::check {
namespace {

using nlohmann::json;

json number(double v) {
  return std::isfinite(v) ? json(v) : json("inf");
}
double number_from(const json& j) {
  if (j.is_string() && j.get<std::string>() != "inf") {
    throw std::invalid_argument("'" + j.get<std::string>() + "' is neither a number nor \"inf\"");
  }
  return j.is_string() ? INFINITY : j.get<double>();
}

/// The integer field `key` of `j` (a count): refuses a fraction, which get<int64_t> would cut.
int64_t count_from(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number_integer()) {
    throw std::invalid_argument(std::string("field '") + key + "' must be an integer, got " +
                                v.dump());
  }
  return v.get<int64_t>();
}

/// A decimal u64 written as a string (the seed): digits only, no sign, no overflow.
uint64_t u64_from(const json& j, const char* field) {
  return verify::decimal_u64_or_throw(j.get<std::string>(), std::string("field '") + field + "'");
}

/// Throws unless `shards` are distinct indices in [0, shard_count).
void check_shard_indices(const std::vector<int>& shards, int shard_count,
                         const std::string& where) {
  for (std::size_t i = 0; i < shards.size(); ++i) {
    if (shards[i] < 0 || shards[i] >= shard_count) {
      throw std::invalid_argument(where + "shard " + std::to_string(shards[i]) +
                                  " is not in [0, shard_count " + std::to_string(shard_count) +
                                  ")");
    }
    if (std::find(shards.begin(), shards.begin() + i, shards[i]) != shards.begin() + i) {
      throw std::invalid_argument(where + "shard " + std::to_string(shards[i]) +
                                  " is listed twice");
    }
  }
}

/// Throws unless the counts of `v` are what a run can produce: none negative, the outcomes
/// (passed, failed, not supported, errors) at most the cases run, those at most the planned
/// ones, no regime, tag or outcome counted on more cases than were run; and a known family.
void check_counts(const VariantReport& v) {
  const std::string where = "variant '" + v.variant + "': ";
  try {
    (void)parse_family(v.family);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  const std::pair<const char*, int64_t> counts[] = {
      {"planned", v.planned},      {"run", v.run},       {"passed", v.passed},
      {"failed", v.failed},        {"errors", v.errors}, {"not_supported", v.not_supported},
      {"runs_twice", v.runs_twice}};
  for (const auto& [field, value] : counts) {
    if (value < 0) {
      throw std::invalid_argument(where + "field '" + field + "' is negative (" +
                                  std::to_string(value) + ")");
    }
  }
  const int64_t outcomes = v.passed + v.failed + v.not_supported + v.errors;
  if (outcomes > v.run) {
    throw std::invalid_argument(
        where + "passed + failed + not_supported + errors = " + std::to_string(outcomes) +
        " is more than the " + std::to_string(v.run) + " cases run");
  }
  if (v.run > v.planned || v.runs_twice > v.run) {
    throw std::invalid_argument(where + "'run' " + std::to_string(v.run) + " or 'runs_twice' " +
                                std::to_string(v.runs_twice) + " exceeds what was planned or run");
  }
  const std::pair<const char*, const std::map<std::string, int64_t>*> maps[] = {
      {"regimes", &v.regimes}, {"tags", &v.tags}, {"outcomes", &v.outcomes}};
  for (const auto& [field, m] : maps) {
    for (const auto& [key, n] : *m) {
      if (n < 0 || n > v.run) {
        throw std::invalid_argument(where + "field '" + field + "' counts " + std::to_string(n) +
                                    " cases for '" + key + "' of " + std::to_string(v.run) +
                                    " run");
      }
    }
  }
}

template <typename M>
void add_counts(M& into, const M& from) {
  for (const auto& [k, v] : from) into[k] += v;
}

/// "flat 40 peaked 90 mixed 70".
std::string counts_text(const std::map<std::string, int64_t>& m) {
  std::ostringstream os;
  for (const auto& [k, v] : m) os << (os.tellp() > 0 ? " " : "") << k << " " << v;
  return os.str();
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

bool VariantReport::ok() const {
  return failed == 0 && errors == 0 && !failure && (run == 0 || 2 * not_supported <= run);
}

int RunReport::exit_code() const {
  bool any_failure = false, any_error = false;
  for (const auto& v : variants) {
    any_failure =
        any_failure || v.failed > 0 || v.failure || (v.run > 0 && 2 * v.not_supported > v.run);
    any_error = any_error || v.errors > 0;
  }
  if (any_failure) return 1;
  return any_error ? 3 : 0;
}

void to_json(json& j, const FailureInfo& f) {
  j = json{{"case_index", f.case_index},
           {"spec", f.spec},
           {"spec_text", f.spec_text},
           {"original_summary", f.original_summary},
           {"outcome", outcome_name(f.outcome)},
           {"message", f.message},
           {"comparison", f.comparison},
           {"rc_id", f.rc_id},
           {"reproduce", f.reproduce},
           {"artifact", f.artifact},
           {"shrink_steps", f.shrink_steps},
           {"shrink_seconds", f.shrink_seconds},
           {"seconds_to_find", f.seconds_to_find},
           {"shrunk_size", f.shrunk_size},
           {"shrink_budget_hit", f.shrink_budget_hit},
           {"reproduced", f.reproduced}};
}

void from_json(const json& j, FailureInfo& f) {
  f.case_index = j.at("case_index").get<int64_t>();
  f.spec = j.at("spec");
  f.spec_text = j.value("spec_text", std::string());
  f.original_summary = j.value("original_summary", std::string());
  f.outcome = parse_outcome(j.at("outcome").get<std::string>());
  f.message = j.value("message", std::string());
  f.comparison = j.value("comparison", json());
  f.rc_id = j.value("rc_id", std::string());
  f.reproduce = j.value("reproduce", std::string());
  f.artifact = j.value("artifact", std::string());
  f.shrink_steps = j.value("shrink_steps", 0);
  f.shrink_seconds = j.value("shrink_seconds", 0.0);
  f.seconds_to_find = j.value("seconds_to_find", 0.0);
  f.shrunk_size = j.value("shrunk_size", int64_t{0});
  f.shrink_budget_hit = j.value("shrink_budget_hit", false);
  f.reproduced = j.value("reproduced", true);
}

void to_json(json& j, const VariantReport& v) {
  j = json{{"registry", v.registry},
           {"family", v.family},
           {"variant", v.variant},
           {"precision", v.precision ? json(*v.precision) : json(nullptr)},
           {"planned", v.planned},
           {"run", v.run},
           {"passed", v.passed},
           {"failed", v.failed},
           {"not_supported", v.not_supported},
           {"errors", v.errors},
           {"error_messages", v.error_messages},
           {"regimes", v.regimes},
           {"tags", v.tags},
           {"possible_tags", v.possible_tags},
           {"outcomes", v.outcomes},
           {"runs_twice", v.runs_twice},
           {"max_ratio", number(v.max_ratio)},
           {"max_abs", number(v.max_abs)},
           {"seconds", v.seconds},
           {"shards", v.shards},
           {"ok", v.ok()},
           {"failure", v.failure ? json(*v.failure) : json(nullptr)}};
}

void from_json(const json& j, VariantReport& v) {
  v.registry = j.at("registry").get<std::string>();
  v.family = j.at("family").get<std::string>();
  if (j.contains("precision") && !j.at("precision").is_null()) {
    v.precision = j.at("precision").get<PrecisionModel>();
  }
  v.variant = j.at("variant").get<std::string>();
  v.planned = count_from(j, "planned");
  v.run = count_from(j, "run");
  v.passed = count_from(j, "passed");
  v.failed = count_from(j, "failed");
  v.not_supported = count_from(j, "not_supported");
  v.errors = count_from(j, "errors");
  v.error_messages = j.value("error_messages", std::vector<std::string>());
  v.regimes = j.at("regimes").get<std::map<std::string, int64_t>>();
  v.tags = j.at("tags").get<std::map<std::string, int64_t>>();
  v.possible_tags = j.value("possible_tags", std::vector<std::string>());
  v.outcomes = j.value("outcomes", std::map<std::string, int64_t>());
  v.runs_twice = j.value("runs_twice", int64_t{0});
  v.max_ratio = number_from(j.at("max_ratio"));
  v.max_abs = number_from(j.at("max_abs"));
  v.seconds = j.at("seconds").get<double>();
  v.shards = j.value("shards", std::vector<int>());
  if (j.contains("failure") && !j.at("failure").is_null())
    v.failure = j.at("failure").get<FailureInfo>();
}

void to_json(json& j, const RunReport& r) {
  j = json{{"schema", kReportSchema},
           {"seed", std::to_string(r.seed)},
           {"cases", r.cases},
           {"shard_count", r.shard_count},
           {"shards", r.shards},
           {"device", r.device},
           {"wall_seconds", r.wall_seconds},
           {"exit_code", r.exit_code()},
           {"variants", r.variants},
           {"notes", r.notes},
           {"plugins", r.plugins},
           {"interrupted", r.interrupted},
           {"tool_version", r.tool_version},
           {"devices", r.devices}};
}

void from_json(const json& j, RunReport& r) {
  if (j.value("schema", std::string()) != kReportSchema) {
    throw std::invalid_argument("not a " + std::string(kReportSchema) + " document");
  }
  r.seed = u64_from(j.at("seed"), "seed");
  r.cases = j.at("cases").get<int>();
  r.shard_count = j.at("shard_count").get<int>();
  r.shards = j.at("shards").get<std::vector<int>>();
  if (r.cases < 1 || r.shard_count < 1) {
    throw std::invalid_argument("fields 'cases' and 'shard_count' must be at least 1");
  }
  check_shard_indices(r.shards, r.shard_count, "");
  r.device = j.value("device", std::string());
  r.wall_seconds = j.value("wall_seconds", 0.0);
  r.variants = j.at("variants").get<std::vector<VariantReport>>();
  r.notes = j.value("notes", std::vector<std::string>());
  r.plugins = j.value("plugins", std::vector<std::string>());
  r.interrupted = j.value("interrupted", false);
  r.tool_version = j.value("tool_version", std::string());
  r.devices = j.value("devices", std::vector<DeviceReport>());
  for (const VariantReport& v : r.variants) {
    check_counts(v);
    check_shard_indices(v.shards, r.shard_count, "variant '" + v.variant + "': ");
    for (int shard : v.shards) {
      if (std::find(r.shards.begin(), r.shards.end(), shard) == r.shards.end()) {
        throw std::invalid_argument("variant '" + v.variant + "': shard " + std::to_string(shard) +
                                    " is not among the report's shards");
      }
    }
  }
}

namespace {

/// Throws when `r` (named `which`) is not a shard of the same run as `first` (`first_name`).
void check_same_run(const RunReport& first, const std::string& first_name, const RunReport& r,
                    const std::string& which) {
  auto refuse = [&](const char* field, const std::string& has, const std::string& want) {
    throw std::invalid_argument("merge: " + which + ": field '" + field + "' is " + has + ", but " +
                                first_name + " has " + want +
                                ": shards of one run share seed, cases, shard_count and "
                                "tool_version (re-run the shard with the same options and "
                                "pagecheck)");
  };
  if (r.seed != first.seed) refuse("seed", std::to_string(r.seed), std::to_string(first.seed));
  if (r.cases != first.cases) {
    refuse("cases", std::to_string(r.cases), std::to_string(first.cases));
  }
  if (r.shard_count != first.shard_count) {
    refuse("shard_count", std::to_string(r.shard_count), std::to_string(first.shard_count));
  }
  if (r.tool_version != first.tool_version) {
    auto shown = [](const std::string& v) {
      return v.empty() ? std::string("(none)") : "'" + v + "'";
    };
    refuse("tool_version", shown(r.tool_version), shown(first.tool_version));
  }
}

}  // namespace

RunReport merge_reports(const std::vector<RunReport>& reports,
                        const std::vector<std::string>& names) {
  if (reports.empty()) throw std::invalid_argument("merge: no reports");
  auto name_of = [&](std::size_t i) {
    return i < names.size() ? "'" + names[i] + "'" : "report " + std::to_string(i + 1);
  };
  RunReport out;
  out.seed = reports[0].seed;
  out.cases = reports[0].cases;
  out.shard_count = reports[0].shard_count;
  out.device = reports[0].device;
  out.tool_version = reports[0].tool_version;
  std::set<int> seen;
  std::vector<std::string> order;
  std::map<std::string, VariantReport> by_key;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const RunReport& r = reports[i];
    const std::string which = name_of(i);
    check_same_run(reports[0], name_of(0), r, which);
    for (const DeviceReport& d : r.devices) {
      auto same = [&](const DeviceReport& m) {
        return m.index == d.index && m.description == d.description;
      };
      auto it = std::find_if(out.devices.begin(), out.devices.end(), same);
      if (it == out.devices.end()) {
        out.devices.push_back(d);
      } else {
        it->add(d);
      }
    }
    for (int s : r.shards) {
      if (!seen.insert(s).second) {
        throw std::invalid_argument("merge: shard " + std::to_string(s) + " appears twice (" +
                                    which + ")");
      }
    }
    out.wall_seconds = std::max(out.wall_seconds, r.wall_seconds);
    out.interrupted = out.interrupted || r.interrupted;
    for (const std::string& p : r.plugins) {
      if (std::find(out.plugins.begin(), out.plugins.end(), p) == out.plugins.end())
        out.plugins.push_back(p);
    }
    for (const std::string& n : r.notes) {
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end())
        out.notes.push_back(n);
    }
    for (const VariantReport& v : r.variants) {
      const std::string key = v.registry + ":" + v.family + "/" + v.variant;
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        order.push_back(key);
        by_key.emplace(key, v);
        continue;
      }
      VariantReport& m = it->second;
      m.planned += v.planned;
      m.run += v.run;
      m.passed += v.passed;
      m.failed += v.failed;
      m.not_supported += v.not_supported;
      m.errors += v.errors;
      for (const auto& e : v.error_messages) {
        if (m.error_messages.size() < 5) m.error_messages.push_back(e);
      }
      add_counts(m.regimes, v.regimes);
      add_counts(m.tags, v.tags);
      add_counts(m.outcomes, v.outcomes);
      m.runs_twice += v.runs_twice;
      m.max_ratio = std::max(m.max_ratio, v.max_ratio);
      m.max_abs = std::max(m.max_abs, v.max_abs);
      m.seconds += v.seconds;
      m.shards.insert(m.shards.end(), v.shards.begin(), v.shards.end());
      if (v.failure && (!m.failure || v.failure->case_index < m.failure->case_index)) {
        m.failure = v.failure;
      }
    }
  }
  out.shards.assign(seen.begin(), seen.end());
  for (const auto& key : order) out.variants.push_back(by_key.at(key));
  std::vector<std::string> missing;
  for (int s = 0; s < out.shard_count; ++s) {
    if (!seen.count(s)) missing.push_back(std::to_string(s));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ",") + m;
    out.notes.push_back("incomplete: shards " + list + " of " + std::to_string(out.shard_count) +
                        " are missing");
  }
  return out;
}

namespace {
/// " --plugin PATH" for each plugin of the run when the variant is a plugin's (else empty).
std::string plugin_args(const VariantReport& v, const RunReport& r) {
  if (v.registry != "plugin") return {};
  if (r.plugins.empty()) return " --plugin LIB";  // a report read back from JSON
  std::string args;
  for (const std::string& p : r.plugins) args += " --plugin " + p;
  return args;
}
}  // namespace

void print_summary(std::ostream& out, const RunReport& r) {
  out << "pagecheck verify: seed " << r.seed << ", " << r.cases << " cases per variant";
  if (r.shard_count > 1) {
    out << ", shards";
    for (int s : r.shards) out << " " << s;
    out << " of " << r.shard_count;
  }
  if (!r.device.empty()) out << ", " << r.device;
  out << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-4s %-40s %6s %6s %6s %6s %10s %8s\n", "", "variant",
                "cases", "passed", "unsup", "failed", "max err/tol", "seconds");
  out << line;
  for (const VariantReport& v : r.variants) {
    const std::string name =
        v.family + "/" + v.variant + (v.registry == "builtin" ? "" : " [" + v.registry + "]");
    const bool attention = v.family == "paged_attention";
    std::snprintf(line, sizeof line, "  %-4s %-40s %6lld %6lld %6lld %6lld %10s %8.2f\n",
                  v.ok() ? "ok" : "FAIL", name.c_str(), static_cast<long long>(v.run),
                  static_cast<long long>(v.passed), static_cast<long long>(v.not_supported),
                  static_cast<long long>(v.failed + (v.failure && v.failed == 0 ? 1 : 0)),
                  attention ? fixed(v.max_ratio, 3).c_str() : "bit-exact", v.seconds);
    out << line;
    if (v.precision) out << "         judged by: " << v.precision->describe() << "\n";
    out << "         regimes: " << counts_text(v.regimes) << "\n";
    const std::vector<std::string>& all = v.possible_tags;
    int hit = 0;
    std::string missing;
    for (const auto& t : all) {
      if (v.tags.count(t)) {
        ++hit;
      } else {
        missing += (missing.empty() ? "" : " ") + t;
      }
    }
    out << "         edge cases hit " << hit << "/" << all.size() << ": " << counts_text(v.tags)
        << "\n";
    if (!missing.empty()) out << "         never hit: " << missing << "\n";
    out << "         run twice (determinism): " << v.runs_twice << " of " << v.run << "\n";
    for (const auto& e : v.error_messages) out << "         harness error: " << e << "\n";
  }
  if (!r.devices.empty()) {
    out << "  per device (cases of every variant; the table above is their merge):\n";
    std::snprintf(line, sizeof line, "  %-4s %-6s %-40s %6s %6s %6s %6s %6s %8s\n", "", "device",
                  "description", "cases", "passed", "unsup", "failed", "faults", "seconds");
    out << line;
    for (const DeviceReport& d : r.devices) {
      const bool ok = d.failed == 0 && d.errors == 0;
      std::snprintf(line, sizeof line, "  %-4s %-6d %-40.40s %6lld %6lld %6lld %6lld %6lld %8.2f\n",
                    ok ? "ok" : "FAIL", d.index, d.description.c_str(),
                    static_cast<long long>(d.cases), static_cast<long long>(d.passed),
                    static_cast<long long>(d.not_supported), static_cast<long long>(d.failed),
                    static_cast<long long>(d.faults), d.seconds);
      out << line;
    }
  }
  for (const VariantReport& v : r.variants) {
    if (!v.failure) continue;
    out << "\n";
    print_counterexample(out, v, r);
  }
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  out << "wall time " << fixed(r.wall_seconds, 1) << " s\n";
}

void print_counterexample(std::ostream& out, const VariantReport& v, const RunReport& r) {
  if (!v.failure) return;
  const FailureInfo& f = *v.failure;
  out << "COUNTEREXAMPLE " << v.family << "/" << v.variant << " (case " << f.case_index
      << ", found after " << fixed(f.seconds_to_find, 2) << " s; shrunk in " << f.shrink_steps
      << " steps, " << fixed(f.shrink_seconds, 2) << " s"
      << (f.shrink_budget_hit ? ", shrink budget reached" : "") << ")\n";
  out << "  first failing case: " << f.original_summary << "\n";
  out << "  shrunk layout:\n";
  std::istringstream block(f.spec_text);
  for (std::string l; std::getline(block, l);) out << "    " << l << "\n";
  out << "  " << outcome_name(f.outcome) << ": " << f.message << "\n";
  if (!f.reproduced) out << "  (the shrink run did not see the failure again: flaky)\n";
  if (!f.reproduce.empty()) {
    // The spec's JSON has no single quote (names and numbers only): safe in '…' for a shell.
    out << "  reproduce: pagecheck verify" << (v.registry == "sim" ? " --simulate" : "")
        << " --kernel " << v.family << " --variant " << v.variant << plugin_args(v, r)
        << " --reproduce-spec '" << f.reproduce << "'\n";
  }
  if (!f.artifact.empty()) {
    out << "  artefact:  " << f.artifact << "  (pagecheck verify --reproduce " << f.artifact
        << ")\n";
  }
}

RunReport read_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read report '" + path + "'");
  try {
    return json::parse(in).get<RunReport>();
  } catch (const std::exception& e) {
    throw std::invalid_argument("report '" + path + "': " + e.what());
  }
}

void write_report(const std::string& path, const RunReport& report) {
  verify::write_file_atomically(path, json(report).dump(2) + "\n");
}

}  // namespace pagecheck::verify::check
