#pragma once
/// Recorded GPU evidence for one evidence unit (a kernel family's built-in variants, or the
/// variants a kernels/families.json entry names) at one content hash (<unit> is the family for
/// built-ins):
///  - fixtures/verification/<unit>-<hash12>.json: the verification record written by
///    `pagecheck verify` (write_verification_record below);
///  - fixtures/bandwidth/<unit>-<hash12>.json (+ .md, .svg): the bandwidth report written by
///    `pagecheck bench --record`.
/// Records are produced by the tools on a GPU, never edited by hand.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/review/families.h"

namespace pagecheck::review {

/// Schema tag of verification records.
inline constexpr const char* kVerificationSchema = "pagecheck.verification/2";
/// Tag of the previous record format (without precision model, errors, tags, goldens,
/// sanitizers, dirty flag): refused with a message asking to re-record it.
inline constexpr const char* kVerificationSchemaV1 = "pagecheck.verification/1";
/// Cases per variant of a full run: the default of `pagecheck verify --cases`. A variant with
/// fewer cases is a quick run, which the review does not accept as evidence.
inline constexpr int64_t kDefaultCasesPerVariant = 200;

/// The precision model a variant's outputs were judged by, as the harness declares it (for
/// attention verify::ToleranceModel::describe() and its constants, docs/tolerances.md; for
/// copies bit-exact comparison, no parameters).
struct PrecisionModel {
  std::string name;  ///< e.g. "float32 strict (c_exp=8, c_arg=4, c_tanh=8, safety=2)"
  std::map<std::string, double> parameters;  ///< e.g. {"c_exp": 8, "safety": 2}
};

/// Verification outcome of one variant.
struct VariantVerification {
  std::string variant;        ///< variant name
  int64_t cases = 0;          ///< cases run (passed + failed + not_supported)
  uint64_t seed = 0;          ///< seed the cases were drawn from
  int64_t passed = 0;         ///< cases matching the reference
  int64_t failed = 0;         ///< cases not matching (or crashing, or guard violations)
  int64_t not_supported = 0;  ///< cases the variant declined (not counted as failures)
  PrecisionModel precision;   ///< how outputs were compared with the reference
  double max_ratio = 0;       ///< worst error / tolerance among passing cases (attention)
  double max_abs = 0;         ///< worst absolute error among passing cases (attention)
  std::map<std::string, int64_t> regimes;  ///< content regime -> cases
  std::map<std::string, int64_t> tags;     ///< edge-case tag -> cases

  /// True when fewer than kDefaultCasesPerVariant cases ran: not full evidence.
  bool quick() const { return cases < kDefaultCasesPerVariant; }
};

/// Whether `verify --golden` ran the golden fixtures in the recording run.
struct GoldenRun {
  bool ran = false;     ///< --golden was given (false: "not run")
  std::string dir;      ///< golden folder checked (relative to the repository when inside it)
  int64_t goldens = 0;  ///< goldens its MANIFEST.json lists (each run on every variant)
  int exit_status = 0;  ///< the golden child's exit status: 0 passed, 1 failed, 3 no GPU/error
  /// True when it ran and exited 0.
  bool passed() const { return ran && exit_status == 0; }
};

/// Whether the recording run ran under compute-sanitizer (detected from the environment
/// compute-sanitizer sets for its target and its process; never self-attested).
struct SanitizerRun {
  bool ran = false;                ///< the run was a compute-sanitizer target
  std::vector<std::string> tools;  ///< e.g. {"memcheck"}; every variant ran under each
};

/// A verification record: one family, one content hash, one device run.
struct VerificationRecord {
  std::string schema = kVerificationSchema;  ///< schema tag
  std::string family;                        ///< kernel family name
  /// Evidence unit (kernels/families.json entry) when it is not named after the family, as
  /// for a plugin's variants; empty: the family's built-in unit.
  std::string unit;
  std::string source_hash;   ///< content hash of the family's sources verified (64 hex)
  std::string device;        ///< e.g. "NVIDIA H200 (sm_90, 132 SMs)"
  std::string date;          ///< UTC, ISO 8601
  std::string git_revision;  ///< pagecheck commit the run was built from
  /// Tracked files of the repository differed from `git_revision`, or there was no git
  /// checkout to compare with (`git_revision` empty).
  bool git_dirty = false;
  std::string tool_version;                   ///< e.g. "pagecheck 0.1.0"
  GoldenRun golden;                           ///< goldens run in the recording run
  SanitizerRun sanitizer;                     ///< compute-sanitizer around the recording run
  std::vector<VariantVerification> variants;  ///< one entry per variant verified

  /// The unit the record belongs to: `unit`, or `family` when that is empty.
  const std::string& unit_name() const { return unit.empty() ? family : unit; }
  /// True when at least one variant was verified, every variant passed at least one case and
  /// none failed.
  bool passed() const;
  /// True when a variant ran fewer than kDefaultCasesPerVariant cases.
  bool quick() const;
  /// "4 variants, 1200 cases: all passed" or "v1_shared_q: 3 of 300 cases failed".
  std::string summary() const;
  /// Throws EvidenceError (prefixed with `origin`) on missing or inconsistent fields: a hash
  /// that is not 64 hex digits, cases != passed + failed + not_supported, negative counts,
  /// duplicate variants, a variant without precision model, a negative or non-finite error.
  void validate(const std::string& origin) const;
};

/// True when `date` is "YYYY-MM-DDTHH:MM:SSZ" naming a real UTC time (as utc_now_iso8601
/// writes it); shared with the bandwidth reports' check.
using identity_fields::is_iso8601_utc;

/// "<unit>-<hash12>.json" (a unit is named after its family unless it holds plugin variants)
std::string evidence_file_name(const std::string& unit, const std::string& hash);
/// <repo>/fixtures/verification/<unit>-<hash12>.json
std::string verification_record_path(const std::string& repo, const std::string& unit,
                                     const std::string& hash);
/// <repo>/fixtures/bandwidth/<unit>-<hash12>.json (the .md and .svg sit beside it)
std::string bandwidth_report_path(const std::string& repo, const std::string& unit,
                                  const std::string& hash);

/// The record as JSON.
nlohmann::json to_json(const VerificationRecord& record);
/// Parses a record; throws EvidenceError naming `origin` and the field, and for a
/// pagecheck.verification/1 record saying it must be re-recorded with `pagecheck verify
/// --record` on a GPU.
VerificationRecord verification_record_from_json(const nlohmann::json& json,
                                                 const std::string& origin);
/// Reads a record file; throws EvidenceError naming the path when unreadable or corrupt.
VerificationRecord read_verification_record(const std::string& path);

/// Writes `record` to verification_record_path(repo, ...) atomically (temporary file renamed
/// into place; the directory is created) and returns the path. When `merge` is true and a
/// record for the same unit and hash exists, its variants not in `record` are kept (entries
/// of `record` replace same-named ones), so variants can be verified in separate runs; the
/// other fields come from `record`, except that the merged record is dirty when either was,
/// keeps the old golden run when `record` ran none, and lists only the sanitizer tools both
/// ran under. An existing pagecheck.verification/1 record is replaced, not merged. Throws
/// EvidenceError when `record` is invalid or the existing file is corrupt, std::runtime_error when
/// the file cannot be written.
std::string write_verification_record(const std::string& repo, const VerificationRecord& record,
                                      bool merge = true);

/// Current UTC time as "2025-01-31T12:34:56Z".
std::string utc_now_iso8601();

}  // namespace pagecheck::review
