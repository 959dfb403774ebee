/// Verification records: verdict, validation, atomic writing (with merging) and evidence paths.
#include "pagecheck/review/evidence.h"
#include "pagecheck/verify/atomic_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/bench/json_fields.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/review/content_hash.h"

namespace pagecheck::review {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  json_fields::fail<EvidenceError>(where, what);
}
/// Merges the run conditions of an existing record into `out`, the record replacing it (see
/// write_verification_record): conditions must hold for the kept variants too.
void merge_conditions(const VerificationRecord& old, VerificationRecord& out) {
  out.git_dirty = out.git_dirty || old.git_dirty;
  if (!out.golden.ran) out.golden = old.golden;
  std::vector<std::string> both;
  for (const auto& t : out.sanitizer.tools) {
    if (std::find(old.sanitizer.tools.begin(), old.sanitizer.tools.end(), t) !=
        old.sanitizer.tools.end()) {
      both.push_back(t);
    }
  }
  out.sanitizer.ran = out.sanitizer.ran && old.sanitizer.ran && !both.empty();
  out.sanitizer.tools = out.sanitizer.ran ? both : std::vector<std::string>{};
}

/// The schema tag of an existing record file ("" when unreadable or not JSON).
std::string schema_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const json j = json::parse(in, nullptr, false);
  return j.is_object() && j.contains("schema") && j["schema"].is_string()
             ? j["schema"].get<std::string>()
             : "";
}

}  // namespace

bool VerificationRecord::quick() const {
  return std::any_of(variants.begin(), variants.end(),
                     [](const VariantVerification& v) { return v.quick(); });
}

bool VerificationRecord::passed() const {
  if (variants.empty()) return false;
  return std::all_of(variants.begin(), variants.end(),
                     [](const VariantVerification& v) { return v.failed == 0 && v.passed > 0; });
}

std::string VerificationRecord::summary() const {
  int64_t cases = 0;
  std::string problems;
  for (const auto& v : variants) {
    cases += v.cases;
    if (v.failed > 0) {
      problems += (problems.empty() ? "" : "; ") + v.variant + ": " + std::to_string(v.failed) +
                  " of " + std::to_string(v.cases) + " cases failed";
    } else if (v.passed == 0) {
      problems += (problems.empty() ? "" : "; ") + v.variant + ": no case passed";
    }
  }
  if (variants.empty()) return "no variant verified";
  const std::string head = std::to_string(variants.size()) + " variant" +
                           (variants.size() == 1 ? "" : "s") + ", " + std::to_string(cases) +
                           " cases";
  return problems.empty() ? head + ": all passed" : head + ": " + problems;
}

void VerificationRecord::validate(const std::string& origin) const {
  if (schema != kVerificationSchema) {
    fail(origin, "schema '" + schema + "' is not " + kVerificationSchema);
  }
  if (family.empty()) fail(origin, "empty 'family'");
  if (unit_name().find('/') != std::string::npos) fail(origin, "'unit' must not contain '/'");
  if (!identity_fields::is_hex64(source_hash))
    fail(origin, "'source_hash' must be 64 lowercase hex digits");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& v = variants[i];
    const std::string where = origin + ": variants[" + std::to_string(i) + "]";
    if (v.variant.empty()) fail(where, "empty 'variant'");
    if (v.cases < 0 || v.passed < 0 || v.failed < 0 || v.not_supported < 0) {
      fail(where, "negative count");
    }
    if (v.cases != v.passed + v.failed + v.not_supported) {
      fail(where, "cases (" + std::to_string(v.cases) + ") != passed + failed + not_supported (" +
                      std::to_string(v.passed + v.failed + v.not_supported) + ")");
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (variants[k].variant == v.variant) fail(where, "duplicate variant '" + v.variant + "'");
    }
    if (v.precision.name.empty()) fail(where, "no precision model ('precision.name' is empty)");
    if (!(v.max_ratio >= 0) || !(v.max_abs >= 0) || !std::isfinite(v.max_ratio) ||
        !std::isfinite(v.max_abs)) {
      fail(where, "'max_ratio' and 'max_abs' must be finite and >= 0");
    }
    for (const auto* counts : {&v.regimes, &v.tags}) {
      for (const auto& [name, n] : *counts) {
        if (name.empty() || n < 0) fail(where, "regime or tag with an empty name or count < 0");
      }
    }
  }
  if (golden.ran && (golden.goldens < 0 || golden.exit_status < 0)) {
    fail(origin, "'golden' counts must be >= 0");
  }
  if (sanitizer.ran == sanitizer.tools.empty()) {
    fail(origin, "'sanitizer': 'ran' must be true exactly when 'tools' names a tool");
  }
}

std::string evidence_file_name(const std::string& unit, const std::string& hash) {
  return unit + "-" + short_hash(hash) + ".json";
}

std::string verification_record_path(const std::string& repo, const std::string& unit,
                                     const std::string& hash) {
  return (fs::path(repo) / "fixtures" / "verification" / evidence_file_name(unit, hash)).string();
}

std::string bandwidth_report_path(const std::string& repo, const std::string& unit,
                                  const std::string& hash) {
  return (fs::path(repo) / "fixtures" / "bandwidth" / evidence_file_name(unit, hash)).string();
}

std::string write_verification_record(const std::string& repo, const VerificationRecord& record,
                                      bool merge) {
  const std::string path = verification_record_path(repo, record.unit_name(), record.source_hash);
  record.validate("verification record for " + record.unit_name());
  VerificationRecord out = record;
  std::error_code ec;
  if (merge && fs::exists(path, ec) && schema_of(path) == kVerificationSchemaV1) {
    std::printf("replacing %s: a %s record (re-recorded in the current format)\n", path.c_str(),
                kVerificationSchemaV1);
  } else if (merge && fs::exists(path, ec)) {
    const VerificationRecord old = read_verification_record(path);
    if (old.unit_name() == record.unit_name() && old.family == record.family &&
        old.source_hash == record.source_hash) {
      for (const auto& v : old.variants) {
        const bool replaced =
            std::any_of(out.variants.begin(), out.variants.end(),
                        [&](const VariantVerification& n) { return n.variant == v.variant; });
        if (!replaced) out.variants.push_back(v);
      }
      std::sort(out.variants.begin(), out.variants.end(),
                [](const auto& a, const auto& b) { return a.variant < b.variant; });
      merge_conditions(old, out);
    }
  }
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) throw std::runtime_error(path + ": cannot create directory: " + ec.message());
  verify::write_file_atomically(path, to_json(out).dump(2) + "\n");
  return path;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace pagecheck::review
