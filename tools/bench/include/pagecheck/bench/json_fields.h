#pragma once
/// Typed, checked reads of JSON object fields for the report and record parsers. Every failure
/// throws `Error(where + ": " + what)`, so the message names the file and the field.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace pagecheck::json_fields {

/// Throws Error("<where>: <what>").
template <class Error>
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(where + ": " + what);
}

/// The field `key` of object `j`; throws when `j` is no object or lacks the field.
template <class Error>
const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object()) fail<Error>(where, "expected a JSON object");
  auto it = j.find(key);
  if (it == j.end()) fail<Error>(where, std::string("missing field '") + key + "'");
  return *it;
}

/// A string field.
template <class Error>
std::string get_string(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& v = field<Error>(j, key, where);
  if (!v.is_string()) fail<Error>(where, std::string("field '") + key + "' must be a string");
  return v.get<std::string>();
}

/// An integer field, at least `min_value`.
template <class Error>
int64_t get_int(const nlohmann::json& j, const char* key, const std::string& where,
                int64_t min_value = INT64_MIN) {
  const nlohmann::json& v = field<Error>(j, key, where);
  if (!v.is_number_integer() || v.get<int64_t>() < min_value) {
    fail<Error>(where, std::string("field '") + key + "' must be an integer" +
                           (min_value == 0 ? " >= 0" : ""));
  }
  return v.get<int64_t>();
}

/// A finite number field.
template <class Error>
double get_number(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& v = field<Error>(j, key, where);
  if (!v.is_number()) fail<Error>(where, std::string("field '") + key + "' must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail<Error>(where, std::string("field '") + key + "' is not finite");
  return d;
}

/// A boolean field.
template <class Error>
bool get_bool(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& v = field<Error>(j, key, where);
  if (!v.is_boolean()) fail<Error>(where, std::string("field '") + key + "' must be true or false");
  return v.get<bool>();
}

}  // namespace pagecheck::json_fields
