#pragma once
/// Typed, checked reads of JSON documents and their object fields for the report, record and
/// family-list parsers. Every failure throws `Error(where + ": " + what)`, so the message names
/// the file and the field.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ios>
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

/// The field `key` of `j`, whose value must pass `is` (e.g. `&nlohmann::json::is_array`); the
/// error then says the field must be `kind` ("an array").
template <class Error>
const nlohmann::json& typed_field(const nlohmann::json& j, const char* key,
                                  const std::string& where,
                                  bool (nlohmann::json::*is)() const noexcept, const char* kind) {
  const nlohmann::json& v = field<Error>(j, key, where);
  if (!(v.*is)()) fail<Error>(where, std::string("field '") + key + "' must be " + kind);
  return v;
}

/// An object field (the value itself, for reading its members).
template <class Error>
const nlohmann::json& get_object(const nlohmann::json& j, const char* key,
                                 const std::string& where) {
  return typed_field<Error>(j, key, where, &nlohmann::json::is_object, "an object");
}

/// An array field (the value itself, for reading its elements).
template <class Error>
const nlohmann::json& get_array(const nlohmann::json& j, const char* key,
                                const std::string& where) {
  return typed_field<Error>(j, key, where, &nlohmann::json::is_array, "an array");
}

/// A string field.
template <class Error>
std::string get_string(const nlohmann::json& j, const char* key, const std::string& where) {
  return typed_field<Error>(j, key, where, &nlohmann::json::is_string, "a string")
      .template get<std::string>();
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
  const double d = typed_field<Error>(j, key, where, &nlohmann::json::is_number, "a number")
                       .template get<double>();
  if (!std::isfinite(d)) fail<Error>(where, std::string("field '") + key + "' is not finite");
  return d;
}

/// A boolean field.
template <class Error>
bool get_bool(const nlohmann::json& j, const char* key, const std::string& where) {
  return typed_field<Error>(j, key, where, &nlohmann::json::is_boolean, "true or false")
      .template get<bool>();
}

/// `text` parsed as JSON; throws Error("<origin>: not valid JSON: ...").
template <class Error>
nlohmann::json parse(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail<Error>(origin, std::string("not valid JSON: ") + e.what());
  }
}

/// The JSON document in the file `path`, `what` naming the kind of file in the errors ("is a
/// directory, not a <what>", "cannot open <what>", "not valid JSON", "cannot read <what>").
template <class Error>
nlohmann::json read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail<Error>(path, "is a directory, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail<Error>(path, "cannot open " + what);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail<Error>(path, std::string("not valid JSON: ") + e.what());
  } catch (const std::ios_base::failure& e) {  // libstdc++: a read error, e.g. EISDIR
    fail<Error>(path, "cannot read " + what + ": " + e.what());
  }
}

}  // namespace pagecheck::json_fields
