/// Recording bandwidth reports under fixtures/bandwidth (see record.h).
#include "pagecheck/review/record.h"
#include "pagecheck/verify/atomic_file.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "pagecheck/bench/plot.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/bench/shapes.h"
#include "pagecheck/registry.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

namespace {

/// Throws EvidenceError unless `report` holds every shape of the built-in default sweep of its
/// family and storage dtype, and no other: evidence is a whole sweep, not a chosen part of one.
void require_whole_sweep(const bench::BenchReport& report, const std::string& origin) {
  const auto sweep =
      bench::builtin_sweep(parse_family(report.family), false, report.shapes.front().shape.dtype);
  std::string missing, extra;
  for (const auto& s : sweep) {
    const bool held = std::any_of(report.shapes.begin(), report.shapes.end(),
                                  [&](const auto& r) { return r.shape.label == s.label; });
    if (!held) missing += (missing.empty() ? "" : ", ") + s.label;
  }
  for (const auto& r : report.shapes) {
    const bool listed = std::any_of(sweep.begin(), sweep.end(),
                                    [&](const auto& s) { return s.label == r.shape.label; });
    if (!listed) extra += (extra.empty() ? "" : ", ") + r.shape.label;
  }
  if (!missing.empty() || !extra.empty()) {
    throw EvidenceError(origin + ": not the whole default sweep of " + report.family +
                        (missing.empty() ? "" : "; missing: " + missing) +
                        (extra.empty() ? "" : "; not in it: " + extra) +
                        " (record a report of `pagecheck bench --family " + report.family + "`)");
  }
}

}  // namespace

void require_default_sweep(const bench::BenchReport& report, const std::string& origin) {
  if (report.sweep != "default") {
    throw EvidenceError(origin + ": sweep '" + report.sweep +
                        "', not the default sweep: record `pagecheck bench --family " +
                        report.family + " --record`");
  }
}

void check_recordable(const std::string& repo, const bench::BenchReport& report,
                      const std::string& origin) {
  require_default_sweep(report, origin);
  bench::require_measurements(report, origin);
  const auto families = load_family_sources(repo);
  const FamilySources& unit = find_family(families, report.unit_name(), kFamiliesFile);
  if (unit.kernel_family() != report.family) {
    throw EvidenceError(origin + ": a " + report.family + " report for " + unit.name + ", which " +
                        kFamiliesFile + " declares as " + unit.kernel_family());
  }
  require_whole_sweep(report, origin);
  const FamilyHash current = working_tree_hash(repo, unit);
  if (current.hash != report.source_hash) {
    throw EvidenceError(origin + ": measured on " + report.unit_name() + " sources " +
                        short_hash(report.source_hash) + ", but the sources in " + repo +
                        " hash to " + short_hash(current.hash) +
                        ": benchmark the current code (and rebuild first)");
  }
}

std::vector<bench::BenchReport> reports_per_unit(const std::string& repo,
                                                 const bench::BenchReport& report,
                                                 const std::vector<std::string>& builtin) {
  const auto units = load_family_sources(repo);
  const std::string file = (fs::path(repo) / kFamiliesFile).string();
  const auto is_builtin = [&](const std::string& v) {
    return std::find(builtin.begin(), builtin.end(), v) != builtin.end();
  };
  std::vector<const FamilySources*> order;
  std::map<std::string, std::vector<std::string>> keep;
  for (const auto& v : report.variants) {
    const FamilySources* unit = recording_unit_for(units, file, report.family, v, is_builtin(v));
    if (unit == nullptr) continue;  // a built-in variant this repository does not record
    if (!keep.count(unit->name)) order.push_back(unit);
    keep[unit->name].push_back(v);
  }
  std::vector<bench::BenchReport> out;
  for (const FamilySources* unit : order) {
    std::vector<std::string> names = keep[unit->name];
    if (!unit->variants.empty()) {
      for (const auto& v : report.variants) {
        if (is_builtin(v) && std::find(names.begin(), names.end(), v) == names.end()) {
          names.push_back(v);
        }
      }
    }
    bench::BenchReport r = bench::select_variants(report, names);
    r.unit = unit->name == report.family ? "" : unit->name;
    r.source_hash = working_tree_hash(repo, *unit).hash;
    out.push_back(std::move(r));
  }
  return out;
}

std::string recorded_report_path(const std::string& repo, const bench::BenchReport& report,
                                 const std::string& dir) {
  return dir.empty() ? bandwidth_report_path(repo, report.unit_name(), report.source_hash)
                     : (fs::path(dir) / evidence_file_name(report.unit_name(), report.source_hash))
                           .string();
}

void check_replaceable(const std::string& json_path, bool force) {
  std::error_code ec;
  const fs::file_status st = fs::status(json_path, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_regular_file(st)) {
    throw EvidenceError(json_path + ": exists and is not a file; cannot record a report there");
  }
  if (!force) {
    throw EvidenceError(json_path + ": a report is already recorded for these sources; pass " +
                        "--force to replace it (with its .md and .svg)");
  }
}

RecordedReport record_bandwidth_report(const std::string& repo, const bench::BenchReport& report,
                                       const std::string& dir, bool force) {
  const fs::path base = recorded_report_path(repo, report, dir);
  bench::require_measurements(report, "the " + report.unit_name() + " report for " + base.string());
  check_replaceable(base.string(), force);
  std::error_code ec;
  fs::create_directories(base.parent_path(), ec);
  if (ec) throw std::runtime_error(base.parent_path().string() + ": " + ec.message());
  RecordedReport out;
  out.json = base.string();
  out.markdown = fs::path(base).replace_extension(".md").string();
  out.svg = fs::path(base).replace_extension(".svg").string();
  // Each file is written beside its target, then moved into place; the report last, so an
  // interrupted run leaves the previous report (or none), never a stale plot beside a new one.
  verify::TempFile temp(out.json);
  const std::string& json_tmp = temp.path();
  bench::write_report(report, json_tmp);  // the plotting script reads the new report
  // tools/plot_bandwidth.py writes beside out.svg and renames into place itself.
  out.plotted = bench::plot_report(repo, json_tmp, out.svg, &out.plot_error);
  if (!out.plotted) {
    fs::remove(out.svg, ec);  // a stale plot of the replaced report
    if (ec) throw std::runtime_error(out.svg + ": cannot remove the stale plot: " + ec.message());
  }
  verify::write_file_atomically(
      out.markdown, bench::render_report_markdown(report, fs::path(out.svg).filename().string()));
  temp.commit(out.json);
  return out;
}

}  // namespace pagecheck::review
