/// Verification records: JSON form, validation, atomic writing and evidence paths.
#include "pagecheck/review/evidence.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>

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
constexpr auto& field = json_fields::field<EvidenceError>;
constexpr auto& get_string = json_fields::get_string<EvidenceError>;
int64_t get_count(const json& j, const char* key, const std::string& where) {
  return json_fields::get_int<EvidenceError>(j, key, where, 0);
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

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
  if (!is_hex64(source_hash)) fail(origin, "'source_hash' must be 64 lowercase hex digits");
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

json to_json(const VerificationRecord& r) {
  json vars = json::array();
  for (const auto& v : r.variants) {
    vars.push_back({{"variant", v.variant},
                    {"cases", v.cases},
                    {"seed", v.seed},
                    {"passed", v.passed},
                    {"failed", v.failed},
                    {"not_supported", v.not_supported}});
  }
  json out = {{"schema", r.schema},
              {"family", r.family},
              {"source_hash", r.source_hash},
              {"device", r.device},
              {"date", r.date},
              {"git_revision", r.git_revision},
              {"tool_version", r.tool_version},
              {"passed", r.passed()},
              {"variants", vars}};
  if (r.unit_name() != r.family) out["unit"] = r.unit;
  return out;
}

VerificationRecord verification_record_from_json(const json& j, const std::string& origin) {
  VerificationRecord r;
  r.schema = get_string(j, "schema", origin);
  r.family = get_string(j, "family", origin);
  if (j.contains("unit")) r.unit = get_string(j, "unit", origin);
  r.source_hash = get_string(j, "source_hash", origin);
  r.device = get_string(j, "device", origin);
  r.date = get_string(j, "date", origin);
  r.git_revision = get_string(j, "git_revision", origin);
  r.tool_version = get_string(j, "tool_version", origin);
  const json& vars = field(j, "variants", origin);
  if (!vars.is_array()) fail(origin, "field 'variants' must be an array");
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const std::string where = origin + ": variants[" + std::to_string(i) + "]";
    VariantVerification v;
    v.variant = get_string(vars[i], "variant", where);
    v.cases = get_count(vars[i], "cases", where);
    const json& seed = field(vars[i], "seed", where);
    if (!seed.is_number_unsigned()) {
      fail(where, "field 'seed' must be a non-negative integer");
    }
    v.seed = seed.get<uint64_t>();
    v.passed = get_count(vars[i], "passed", where);
    v.failed = get_count(vars[i], "failed", where);
    v.not_supported = get_count(vars[i], "not_supported", where);
    r.variants.push_back(std::move(v));
  }
  r.validate(origin);
  // The stored verdict is redundant; a record whose verdict disagrees was edited by hand.
  const json& stored = field(j, "passed", origin);
  if (!stored.is_boolean() || stored.get<bool>() != r.passed()) {
    fail(origin, "field 'passed' disagrees with the variants' counts");
  }
  return r;
}

VerificationRecord read_verification_record(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EvidenceError(path + ": cannot open verification record");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw EvidenceError(path + ": not valid JSON: " + e.what());
  }
  return verification_record_from_json(j, path);
}

std::string write_verification_record(const std::string& repo, const VerificationRecord& record,
                                      bool merge) {
  const std::string path = verification_record_path(repo, record.unit_name(), record.source_hash);
  record.validate("verification record for " + record.unit_name());
  VerificationRecord out = record;
  std::error_code ec;
  if (merge && fs::exists(path, ec)) {
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
    }
  }
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) throw std::runtime_error(path + ": cannot create directory: " + ec.message());
  bench::write_text_file_atomic(path, to_json(out).dump(2) + "\n");
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
