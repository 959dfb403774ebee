#pragma once
/// The identity fields every piece of evidence carries, in bandwidth reports
/// (bench::BenchReport) and verification records (review::VerificationRecord) alike: what it is
/// of (family, unit, source_hash) and where it came from (git_revision, git_dirty, date,
/// tool_version). One writer and one checked reader serve both; each keeps its own schema check.
#include <nlohmann/json.hpp>

#include <string>

#include "pagecheck/bench/json_fields.h"

namespace pagecheck::identity_fields {

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
