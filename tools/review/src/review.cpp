/// The review: current hashes, evidence lookup and before/after comparisons.
#include "pagecheck/review/review.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "pagecheck/bench/json_fields.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"
#include "pagecheck/review/git.h"
#include "pagecheck/review/record.h"

namespace pagecheck::review {

namespace fs = std::filesystem;

int ReviewResult::problem_count() const {
  int n = 0;
  for (const auto& f : families) n += static_cast<int>(f.problems.size());
  return n;
}

int ReviewResult::exit_code() const {
  return problem_count() > 0 ? 1 : 0;
}

namespace {

std::string rel(const std::string& repo, const std::string& path) {
  std::error_code ec;
  const auto r = fs::relative(path, repo, ec);
  return ec ? path : r.generic_string();
}

/// Adds a problem to `fr` for each variant its evidence must hold that `present` (the variants
/// of `evidence`) lacks: the variants its families.json entry declares, else its family's
/// registered built-in variants; and, when the built-in variants are known, for each variant
/// of `present` that is neither declared nor a registered built-in variant of its family.
void require_variants(FamilyReview& fr, const std::vector<std::string>& present,
                      const std::string& evidence, const std::string& lacks,
                      const ReviewOptions& options) {
  const auto has = [](const std::vector<std::string>& names, const std::string& v) {
    return std::find(names.begin(), names.end(), v) != names.end();
  };
  std::vector<std::string> builtin;
  if (options.builtin_variants) {
    const auto it = options.builtin_variants->find(fr.kernel_family);
    if (it != options.builtin_variants->end()) builtin = it->second;
  }
  for (const auto& v : fr.declared_variants) {
    if (!has(present, v)) {
      fr.problems.push_back(evidence + " " + lacks + " " + v +
                            ", which kernels/families.json assigns to " + fr.family);
    }
  }
  if (!options.builtin_variants) return;
  if (fr.declared_variants.empty()) {
    for (const auto& v : builtin) {
      if (!has(present, v)) {
        fr.problems.push_back(evidence + " " + lacks + " " + v + ", a registered built-in " +
                              fr.kernel_family + " variant");
      }
    }
  }
  std::vector<std::string> reported;
  for (const auto& v : present) {
    if (has(fr.declared_variants, v) || has(builtin, v) || has(reported, v)) continue;
    reported.push_back(v);
    fr.problems.push_back(evidence + " has a result for " + v + ", which is neither a registered " +
                          fr.kernel_family + " variant nor declared in kernels/families.json");
  }
}

/// Adds a problem to `fr` for each field of `rec` that a reviewer cannot trust: an empty
/// device or tool version, a date that is not ISO 8601 UTC, a quick variant (fewer cases than
/// a full run), goldens that failed in the recording run.
void require_record_fields(FamilyReview& fr, const VerificationRecord& rec) {
  const std::string name = "verification record " + fr.verification_path;
  if (rec.device.empty()) fr.problems.push_back(name + ": empty 'device'");
  if (!is_iso8601_utc(rec.date)) {
    fr.problems.push_back(name + ": 'date' \"" + rec.date +
                          "\" is not an ISO 8601 UTC time (YYYY-MM-DDTHH:MM:SSZ)");
  }
  if (rec.tool_version.empty()) fr.problems.push_back(name + ": empty 'tool_version'");
  for (const auto& v : rec.variants) {
    if (v.quick()) {
      fr.problems.push_back(name + ": " + v.variant + " ran " + std::to_string(v.cases) +
                            " cases, fewer than the " + std::to_string(kDefaultCasesPerVariant) +
                            " of a full run ('quick'): re-record it with `pagecheck verify "
                            "--record` and the default --cases");
    }
  }
  if (rec.golden.ran && !rec.golden.passed()) {
    fr.problems.push_back(name + ": the goldens (" + rec.golden.dir +
                          ") failed in the recording run (exit " +
                          std::to_string(rec.golden.exit_status) + ")");
  }
}

/// Checks the current verification record of `fr`.
void check_verification(const std::string& repo, FamilyReview& fr, const ReviewOptions& options) {
  const std::string path = verification_record_path(repo, fr.family, fr.hash);
  fr.verification_path = rel(repo, path);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fr.problems.push_back("no GPU verification record for its current sources (hash " +
                          short_hash(fr.hash) + "): expected " + fr.verification_path +
                          ", written by `pagecheck verify` on a GPU");
    return;
  }
  const VerificationRecord rec = read_verification_record(path);
  if (rec.unit_name() != fr.family || rec.family != fr.kernel_family ||
      rec.source_hash != fr.hash) {
    throw EvidenceError(path + ": record is for " + rec.unit_name() + " (" + rec.family +
                        ") hash " + rec.source_hash + ", but kernels/families.json and its name " +
                        "say " + fr.family + " (" + fr.kernel_family + ") hash " + fr.hash);
  }
  std::vector<std::string> verified;
  for (const auto& v : rec.variants) verified.push_back(v.variant);
  require_variants(fr, verified, "verification record " + fr.verification_path, "has no result for",
                   options);
  require_record_fields(fr, rec);
  fr.verification = rec;
  fr.verification_present = true;
  fr.verification_passed = rec.passed();
  fr.verification_summary = rec.summary();
  fr.verification_device = rec.device;
  if (!fr.verification_passed) {
    fr.problems.push_back("verification record " + fr.verification_path +
                          " did not pass: " + fr.verification_summary);
  }
}

/// Checks the report's identity against the expected unit, kernel family and hash.
void check_identity(const bench::BenchReport& r, const std::string& origin, const FamilyReview& fr,
                    const std::string& hash) {
  if (r.unit_name() != fr.family || r.family != fr.kernel_family || r.source_hash != hash) {
    throw EvidenceError(origin + ": report is for " + r.unit_name() + " (" + r.family + ") hash " +
                        r.source_hash + ", but kernels/families.json and its name say " +
                        fr.family + " (" + fr.kernel_family + ") hash " + hash);
  }
}

/// Checks the current bandwidth report; returns it when present.
std::optional<bench::BenchReport> check_bandwidth(const std::string& repo, FamilyReview& fr,
                                                  const ReviewOptions& options) {
  const std::string path = bandwidth_report_path(repo, fr.family, fr.hash);
  fr.bandwidth_path = rel(repo, path);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fr.problems.push_back("no bandwidth report for its current sources (hash " +
                          short_hash(fr.hash) + "): expected " + fr.bandwidth_path +
                          ", written by `pagecheck bench --family " + fr.kernel_family +
                          (fr.declared_variants.empty() ? "" : " --plugin ...") +
                          " --record` on a GPU");
    return std::nullopt;
  }
  bench::BenchReport r = bench::read_report(path);
  check_identity(r, path, fr, fr.hash);
  fr.bandwidth_present = true;
  // What recording refuses (record.h), in case the file came some other way.
  const std::string origin = "bandwidth report " + fr.bandwidth_path;
  try {
    require_default_sweep(r, origin);
  } catch (const EvidenceError& e) {
    fr.problems.push_back(e.what());
  }
  try {
    bench::require_measurements(r, origin);
  } catch (const bench::ReportError& e) {
    fr.problems.push_back(e.what());
  }
  // read_report validated that every row's variant is one of r.variants.
  require_variants(fr, r.variants, "bandwidth report " + fr.bandwidth_path, "has no rows for",
                   options);
  fr.bandwidth_device = r.environment.device;
  for (const auto& sr : r.shapes) {
    for (const auto& v : sr.variants) {
      if (v.status == bench::RunStatus::kFailed) {
        fr.problems.push_back("bandwidth report " + fr.bandwidth_path + ": " + v.variant +
                              " failed on " + sr.shape.label + ": " + v.message);
      }
      if (bench::marked_above_ceiling(v)) {
        fr.notes.push_back("bandwidth report: " + v.variant + " on " + sr.shape.label +
                           " is above the measured ceiling (" +
                           std::to_string(std::lround(v.ceiling_share * 100)) + "%)");
      }
    }
  }
  return r;
}

/// The report recorded for `hash`: from the working tree, else from the base commit.
std::optional<bench::BenchReport> find_base_report(const std::string& repo,
                                                   const std::string& commit,
                                                   const std::string& base, FamilyReview& fr) {
  const std::string path = bandwidth_report_path(repo, fr.family, fr.base_hash);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    fr.base_report_origin = rel(repo, path);
    bench::BenchReport r = bench::read_report(path);
    check_identity(r, path, fr, fr.base_hash);
    return r;
  }
  const std::string in_tree = "fixtures/bandwidth/" + evidence_file_name(fr.family, fr.base_hash);
  const auto text = file_at(repo, commit, in_tree);
  if (!text) return std::nullopt;
  const std::string origin = base + ":" + in_tree;
  bench::BenchReport r =
      bench::report_from_json(json_fields::parse<EvidenceError>(*text, origin), origin);
  check_identity(r, origin, fr, fr.base_hash);
  fr.base_report_origin = origin;
  return r;
}

}  // namespace

ReviewResult run_review(const ReviewOptions& options) {
  if (!(options.threshold >= 0) || !std::isfinite(options.threshold)) {
    throw std::invalid_argument("--threshold must be a non-negative number");
  }
  ReviewResult result;
  result.repo = options.repo;
  result.threshold = options.threshold;
  const std::vector<FamilySources> families = load_family_sources(options.repo);
  check_builtin_families(options.repo, families, options.kernel_families);
  if (!options.builtin_variants) {
    result.notes.push_back(
        "registered built-in variants not checked: this pagecheck has no "
        "built-in kernels (a build without CUDA)");
  }
  result.head = git_head(options.repo).value_or("");
  result.dirty = !result.head.empty() && git_dirty(options.repo);

  std::vector<std::string> base_tree;
  std::vector<FamilySources> base_families;
  if (options.base) {
    if (result.head.empty()) {
      throw std::invalid_argument("--base " + *options.base + ": " + options.repo +
                                  " is not a git repository");
    }
    result.base = *options.base;
    result.base_commit = resolve_commit(options.repo, *options.base);
    base_tree = list_tree(options.repo, result.base_commit);
    const auto text = file_at(options.repo, result.base_commit, kFamiliesFile);
    base_families =
        text ? parse_family_sources(*text, result.base + ":" + kFamiliesFile) : families;
  }

  for (const auto& family : families) {
    FamilyReview fr;
    fr.family = family.name;
    fr.kernel_family = family.kernel_family();
    fr.declared_variants = family.variants;
    const FamilyHash current = working_tree_hash(options.repo, family);
    fr.hash = current.hash;
    fr.sources = current.files;
    check_verification(options.repo, fr, options);
    const auto report = check_bandwidth(options.repo, fr, options);
    if (options.base) {
      const FamilySources* then = nullptr;
      for (const auto& f : base_families) {
        if (f.name == family.name && f.kernel_family() == family.kernel_family()) then = &f;
      }
      if (then != nullptr) {
        fr.base_hash = commit_hash(options.repo, result.base_commit, base_tree, *then).hash;
      }
      fr.changed = fr.base_hash != fr.hash;
      if (fr.base_hash.empty()) {
        fr.notes.push_back("new since " + result.base + ": no sources at the base");
      } else if (fr.changed) {
        const auto before = find_base_report(options.repo, result.base_commit, result.base, fr);
        if (!before) {
          fr.notes.push_back("no bandwidth report was recorded for the base's sources (hash " +
                             short_hash(fr.base_hash) + "): no before/after comparison");
        } else if (report) {
          fr.comparison = bench::compare_reports(*before, *report, options.threshold);
          for (const auto& w : fr.comparison->warnings) fr.notes.push_back(w);
          const int n = fr.comparison->regressions();
          if (n > 0) {
            fr.problems.push_back(std::to_string(n) + " row(s) slower than at " + result.base +
                                  " by more than " +
                                  std::to_string(std::lround(options.threshold * 100)) +
                                  "% and beyond the runs' noise");
          }
        }
      }
    }
    result.families.push_back(std::move(fr));
  }
  return result;
}

}  // namespace pagecheck::review
