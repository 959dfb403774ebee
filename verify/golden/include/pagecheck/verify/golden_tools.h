#pragma once
/// The operations behind `pagecheck golden regen|check|show|diff`, as library functions so the
/// tests can drive them. Return values are the CLI's exit status (0 ok, 1 check failed); bad
/// input throws GoldenError / std::invalid_argument (exit 2).
#include <iosfwd>
#include <string>
#include <vector>

#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_cases.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {

/// The complete in-memory golden of a case: its spec materialized (gen::materialize), the
/// reference outputs, every attribute and checksum. Deterministic: the same case gives the same
/// GoldenFile.
GoldenFile build_golden(const GoldenCase& golden_case);

/// Options of regen_goldens.
struct RegenOptions {
  std::string dir;                 ///< golden directory
  std::vector<std::string> cases;  ///< case names; empty = every case of the catalogue
  bool force = false;              ///< replace goldens whose content changed
};

/// Rebuilds the named cases (each written to a temporary file in `dir`, then renamed over the
/// old one), then MANIFEST.json. A file that comes out byte-identical is left alone; one whose
/// content changed is only replaced with `force`, otherwise its changed datasets are printed
/// and the status is 1. Throws std::invalid_argument on an unknown case or missing directory.
int regen_goldens(const RegenOptions& options, std::ostream& out);

/// Verdict of one MANIFEST.json entry in check_goldens.
struct CheckedCase {
  std::string name;                   ///< case name as the manifest lists it
  std::string file;                   ///< path of its golden file
  std::string status;                 ///< "ok", "failed" (a check failed) or "bad" (bad input)
  std::vector<std::string> messages;  ///< what failed, one line each (empty when ok)
};

/// Everything check_goldens found, for `golden check --json`.
struct CheckReport {
  std::string dir;                    ///< golden directory checked
  std::vector<CheckedCase> cases;     ///< one per manifest entry, in manifest order
  std::vector<std::string> problems;  ///< failures of the directory or manifest as a whole
  bool manifest_bad = false;          ///< MANIFEST.json itself is bad input (no case checked)
  int bad = 0;                        ///< cases that are bad input
  int failed = 0;                     ///< failed cases plus directory-level failures
  /// 2 when the manifest or a golden is bad input, 1 when a check failed, 0 otherwise.
  int exit_code() const { return manifest_bad || bad > 0 ? 2 : failed > 0 ? 1 : 0; }
};

/// Reloads every golden of `dir` (strictly, with checksums), checks MANIFEST.json against the
/// files (checksums and datasets: bad input; every metadata field: family, dtype, description,
/// seed, parameters = the spec, file_bytes, and total_bytes: a failed check naming file and
/// field) and the catalogue, regenerates each case's inputs and compares them bit for bit, and
/// recomputes the outputs with the reference from the loaded inputs: storage-dtype outputs and
/// copies bit for bit, float64 output and lse within 1e-12 of the tensor's largest finite
/// magnitude. A golden or manifest of another schema version is bad input whose message says
/// which version it is and how to regenerate. Prints one line
/// per case. Returns 0 when all pass, 1 when one differs, 2 when a golden or the manifest is
/// bad input (named in the output; a manifest entry whose file is absolute or has `..` is bad
/// input). Writes nothing; `report`, when given, receives the verdicts.
int check_goldens(const std::string& dir, std::ostream& out, CheckReport* report = nullptr);

/// `report` as JSON text (schema "pagecheck.golden_check/1": dir, source, exit_code, counts,
/// problems, and per case name, file, status, messages); `source` says where dir came from.
std::string check_report_json(const CheckReport& report, const std::string& source);

/// Prints a golden's parameters and one summary line per dataset (type, dims, range, NaN
/// count, SHA-256). Throws GoldenError on a bad file.
void show_golden(const std::string& path, std::ostream& out);

/// Differences between two golden files: root attributes, missing datasets, type or shape
/// changes, and per dataset the number of differing elements and the largest absolute
/// difference. Empty when the contents are equal.
std::vector<std::string> describe_differences(const GoldenFile& a, const GoldenFile& b);

/// Prints describe_differences(read a, read b); returns 0 when equal, 1 otherwise. Throws
/// GoldenError when either file cannot be read.
int diff_goldens(const std::string& a, const std::string& b, std::ostream& out);

}  // namespace pagecheck::verify::golden
