#pragma once
/// The identity fields every piece of evidence carries, in bandwidth reports
/// (bench::BenchReport) and verification records (review::VerificationRecord) alike: what it is
/// of (family, unit, source_hash) and where it came from (git_revision, git_dirty, date,
/// tool_version). One writer and one checked reader serve both; each keeps its own schema check.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string>

#include "pagecheck/bench/json_fields.h"

namespace pagecheck::identity_fields {

/// True for 64 lowercase hexadecimal digits: a source hash (SHA-256, review/content_hash.h).
inline bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

/// True when `date` is "YYYY-MM-DDTHH:MM:SSZ" naming a real UTC time (2025-02-30 is none), as
/// the evidence writers give it.
inline bool is_iso8601_utc(const std::string& date) {
  if (date.size() != 20) return false;
  for (std::size_t i = 0; i < date.size(); ++i) {
    const char want = "dddd-dd-ddTdd:dd:ddZ"[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(date[i])) != 0;
    if (want == 'd' ? !digit : date[i] != want) return false;
  }
  std::tm tm{};
  if (strptime(date.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return false;
  const std::tm parsed = tm;
  const std::time_t t = timegm(&tm);  // normalizes: 2025-02-30 becomes March 2
  std::tm back{};
  gmtime_r(&t, &back);
  return back.tm_year == parsed.tm_year && back.tm_mon == parsed.tm_mon &&
         back.tm_mday == parsed.tm_mday && back.tm_hour == parsed.tm_hour &&
         back.tm_min == parsed.tm_min && back.tm_sec == parsed.tm_sec;
}

/// Sets the identity fields of `evidence` in `out`; "unit" only when the unit is not named after
/// the family.
template <class Evidence>
void write(const Evidence& evidence, nlohmann::json& out) {
  out["family"] = evidence.family;
  if (evidence.unit_name() != evidence.family) out["unit"] = evidence.unit;
  out["source_hash"] = evidence.source_hash;
  out["git_revision"] = evidence.git_revision;
  out["git_dirty"] = evidence.git_dirty;
  out["date"] = evidence.date;
  out["tool_version"] = evidence.tool_version;
}

/// Reads the identity fields of `j` into `evidence` ("unit" is optional); throws
/// Error("<origin>: ...") naming a missing or mistyped field.
template <class Error, class Evidence>
void read(const nlohmann::json& j, const std::string& origin, Evidence& evidence) {
  evidence.family = json_fields::get_string<Error>(j, "family", origin);
  if (j.contains("unit")) evidence.unit = json_fields::get_string<Error>(j, "unit", origin);
  evidence.source_hash = json_fields::get_string<Error>(j, "source_hash", origin);
  evidence.git_revision = json_fields::get_string<Error>(j, "git_revision", origin);
  evidence.git_dirty = json_fields::get_bool<Error>(j, "git_dirty", origin);
  evidence.date = json_fields::get_string<Error>(j, "date", origin);
  evidence.tool_version = json_fields::get_string<Error>(j, "tool_version", origin);
}

}  // namespace pagecheck::identity_fields
