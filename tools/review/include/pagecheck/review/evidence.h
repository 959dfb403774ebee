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
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/review/families.h"

namespace pagecheck::review {

/// Schema tag of verification records.
inline constexpr const char* kVerificationSchema = "pagecheck.verification/1";

/// Verification outcome of one variant.
struct VariantVerification {
  std::string variant;        ///< variant name
  int64_t cases = 0;          ///< cases run (passed + failed + not_supported)
  uint64_t seed = 0;          ///< seed the cases were drawn from
  int64_t passed = 0;         ///< cases matching the reference
  int64_t failed = 0;         ///< cases not matching (or crashing, or guard violations)
  int64_t not_supported = 0;  ///< cases the variant declined (not counted as failures)
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
  std::string tool_version;  ///< e.g. "pagecheck 0.1.0"
  std::vector<VariantVerification> variants;  ///< one entry per variant verified

  /// The unit the record belongs to: `unit`, or `family` when that is empty.
  const std::string& unit_name() const { return unit.empty() ? family : unit; }
  /// True when at least one variant was verified, every variant passed at least one case and
  /// none failed.
  bool passed() const;
  /// "4 variants, 1200 cases: all passed" or "v1_shared_q: 3 of 300 cases failed".
  std::string summary() const;
  /// Throws EvidenceError (prefixed with `origin`) on missing or inconsistent fields: a hash
  /// that is not 64 hex digits, cases != passed + failed + not_supported, negative counts,
  /// duplicate variants.
  void validate(const std::string& origin) const;
};

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
/// Parses a record; throws EvidenceError naming `origin` and the field.
VerificationRecord verification_record_from_json(const nlohmann::json& json,
                                                 const std::string& origin);
/// Reads a record file; throws EvidenceError naming the path when unreadable or corrupt.
VerificationRecord read_verification_record(const std::string& path);

/// Writes `record` to verification_record_path(repo, ...) atomically (temporary file renamed
/// into place; the directory is created) and returns the path. When `merge` is true and a
/// record for the same unit and hash exists, its variants not in `record` are kept (entries
/// of `record` replace same-named ones), so variants can be verified in separate runs; the
/// other fields come from `record`. Throws EvidenceError when `record` is invalid or the
/// existing file is corrupt, std::runtime_error when the file cannot be written.
std::string write_verification_record(const std::string& repo, const VerificationRecord& record,
                                      bool merge = true);

/// Current UTC time as "2025-01-31T12:34:56Z".
std::string utc_now_iso8601();

}  // namespace pagecheck::review
