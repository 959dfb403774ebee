#pragma once
/// `pagecheck review`: ties every kernel family's current code to its recorded GPU evidence and,
/// for families changed since a base revision, compares the bandwidth recorded for the base's
/// hash with the current one.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/bench/compare.h"
#include "pagecheck/review/evidence.h"

namespace pagecheck::review {

/// What to review.
struct ReviewOptions {
  std::string repo = ".";           ///< repository root (holds kernels/families.json)
  std::optional<std::string> base;  ///< base revision for before/after comparisons
  double threshold = 0.05;          ///< slowdown beyond which a slower row fails
  /// Kernel families pagecheck implements (from the variant registry). When not empty,
  /// kernels/families.json may name no other family, and a repository holding pagecheck's
  /// built-in kernels (check_builtin_families) must have a unit for each.
  std::vector<std::string> kernel_families;
  /// Registered built-in variant names per kernel family (the variant registry). When set,
  /// every unit's record and report must hold each built-in variant of its family (a built-in
  /// unit) or each variant it declares, and no variant that is neither; nullopt: built-in
  /// variants not checked (a build without the built-in kernels), said in the notes.
  std::optional<std::map<std::string, std::vector<std::string>>> builtin_variants;
};

/// Evidence and verdicts of one evidence unit (a kernels/families.json entry: a family's
/// built-in variants, or named variants such as a plugin's).
struct FamilyReview {
  std::string family;                          ///< unit name (the family's name for built-in units)
  std::string kernel_family;                   ///< kernel family of the unit's variants
  std::vector<std::string> declared_variants;  ///< variants the unit names (empty: built-ins)
  std::string hash;                            ///< current content hash
  std::vector<std::string> sources;            ///< current source files
  std::string verification_path;               ///< where the record for `hash` is (or would be)
  bool verification_present = false;           ///< the record exists
  bool verification_passed = false;            ///< ... and passed
  std::string verification_summary;            ///< record's summary line
  std::string verification_device;             ///< record's device
  std::optional<VerificationRecord> verification;  ///< the record, when present
  std::string bandwidth_path;                      ///< where the report for `hash` is (or would be)
  bool bandwidth_present = false;                  ///< the report exists
  std::string bandwidth_device;                    ///< report's device
  bool changed = false;            ///< hash differs from the base's (only with a base)
  std::string base_hash;           ///< hash at the base ("" when the family is new there)
  std::string base_report_origin;  ///< where the base report came from, if found
  std::optional<bench::Comparison> comparison;  ///< base report -> current report
  std::vector<std::string> problems;            ///< reasons the review fails for this family
  std::vector<std::string> notes;               ///< information that does not fail the review
};

/// Result of a review.
struct ReviewResult {
  std::string repo;                    ///< repository root
  std::string head;                    ///< HEAD commit ("" outside git)
  bool dirty = false;                  ///< tracked files differ from HEAD
  std::string base;                    ///< base revision as given ("" without --base)
  std::string base_commit;             ///< its commit id
  double threshold = 0.05;             ///< regression threshold
  std::vector<FamilyReview> families;  ///< in families.json order
  std::vector<std::string> notes;      ///< information about the whole review
  /// Problems over all families.
  int problem_count() const;
  /// 1 when any family has a problem, else 0.
  int exit_code() const;
};

/// Runs the review. Throws std::invalid_argument (exit 2) for bad usage or bad input: an
/// unknown base revision, a missing or corrupt families file (or one failing
/// check_builtin_families), a corrupt or inconsistent record or report (the message names the
/// file), a negative threshold.
ReviewResult run_review(const ReviewOptions& options);

/// One Markdown summary ready to post on a pull request.
std::string render_review_markdown(const ReviewResult& result);

/// Schema tag of the review's JSON form.
inline constexpr const char* kReviewSchema = "pagecheck.review/1";
/// The review as JSON (`pagecheck review --json`): verdict, exit status, tree, base, and per
/// unit its hash, sources, the verification record (as recorded), the bandwidth report's
/// path and device, the comparison's counts and rows, problems and notes.
nlohmann::json review_to_json(const ReviewResult& result);

}  // namespace pagecheck::review
