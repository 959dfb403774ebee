/// The review as JSON (`pagecheck review --json`, see review.h).
#include "pagecheck/review/review.h"

namespace pagecheck::review {

using nlohmann::json;

namespace {

json comparison_json(const bench::Comparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"shape", r.shape},
                    {"old_variant", r.old_variant},
                    {"new_variant", r.new_variant},
                    {"speedup", r.speedup},
                    {"verdict", bench::verdict_name(r.verdict)},
                    {"regression", r.regression}});
  }
  return {{"title", c.title},
          {"threshold", c.threshold},
          {"faster", c.count(bench::Verdict::kFaster)},
          {"slower", c.count(bench::Verdict::kSlower)},
          {"same", c.count(bench::Verdict::kSame)},
          {"unavailable", c.count(bench::Verdict::kUnavailable)},
          {"regressions", c.regressions()},
          {"warnings", c.warnings},
          {"rows", rows}};
}

json unit_json(const FamilyReview& f) {
  json j = {{"unit", f.family},
            {"kernel_family", f.kernel_family},
            {"declared_variants", f.declared_variants},
            {"hash", f.hash},
            {"sources", f.sources},
            {"verification",
             {{"path", f.verification_path},
              {"present", f.verification_present},
              {"passed", f.verification_passed},
              {"summary", f.verification_summary},
              {"record", f.verification ? to_json(*f.verification) : json(nullptr)}}},
            {"bandwidth",
             {{"path", f.bandwidth_path},
              {"present", f.bandwidth_present},
              {"device", f.bandwidth_device}}},
            {"problems", f.problems},
            {"notes", f.notes},
            {"ok", f.problems.empty()}};
  if (!f.base_hash.empty() || f.changed) {
    j["base"] = {{"hash", f.base_hash},
                 {"changed", f.changed},
                 {"report", f.base_report_origin},
                 {"comparison", f.comparison ? comparison_json(*f.comparison) : json(nullptr)}};
  }
  return j;
}

}  // namespace

json review_to_json(const ReviewResult& r) {
  json units = json::array();
  for (const auto& f : r.families) units.push_back(unit_json(f));
  json out = {{"schema", kReviewSchema},
              {"passed", r.exit_code() == 0},
              {"exit_code", r.exit_code()},
              {"problems", r.problem_count()},
              {"repo", r.repo},
              {"head", r.head},
              {"dirty", r.dirty},
              {"threshold", r.threshold},
              {"notes", r.notes},
              {"units", units}};
  if (!r.base.empty()) out["base"] = {{"revision", r.base}, {"commit", r.base_commit}};
  return out;
}

}  // namespace pagecheck::review
