/// Variant caps from Python arguments (caps_args.h).
#include "caps_args.h"

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/registry.h"

namespace pagecheck::python {
namespace {

using nlohmann::json;

/// The PC_CAP_* flags by the names cap_names gives them.
std::map<std::string, uint64_t> flag_bits() {
  std::map<std::string, uint64_t> bits;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t flag = uint64_t{1} << bit;
    const std::vector<std::string> names = verify::gen::cap_names(flag);
    if (names.size() == 1 && names[0].rfind("bit ", 0) != 0) bits[names[0]] = flag;
  }
  return bits;
}

std::string repr_text(const py::handle& value) {
  return py::repr(value).cast<std::string>();
}

/// `caps` as a dict: a dict itself, or the attributes of an object (vars(obj)).
py::dict caps_dict(const py::handle& caps) {
  if (py::isinstance<py::dict>(caps)) return py::reinterpret_borrow<py::dict>(caps);
  if (!caps.is_none() && py::hasattr(caps, "__dict__")) {
    return py::dict(py::module_::import("builtins").attr("vars")(caps));
  }
  throw py::type_error(
      "caps: expected a dict (or an object with attributes) naming dtypes, "
      "head_sizes, block_sizes, ..., got " +
      repr_text(caps));
}

/// Key `key` of caps as a list of str (a single str is a list of one).
json strings(const py::handle& value, const std::string& key) {
  json out = json::array();
  if (py::isinstance<py::str>(value)) return json::array({value.cast<std::string>()});
  if (!py::isinstance<py::sequence>(value)) {
    throw py::type_error(key + ": expected a list of names, got " + repr_text(value));
  }
  for (const py::handle item : value) {
    if (!py::isinstance<py::str>(item)) {
      throw py::type_error(key + ": expected names (str), got " + repr_text(item));
    }
    out.push_back(item.cast<std::string>());
  }
  return out;
}

/// Key `key` of caps as a list of int (a single int is a list of one).
json integers(const py::handle& value, const std::string& key) {
  const auto is_int = [](const py::handle& v) {
    return py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v);
  };
  if (is_int(value)) return json::array({value.cast<int64_t>()});
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
    throw py::type_error(key + ": expected a list of ints, got " + repr_text(value));
  }
  json out = json::array();
  for (const py::handle item : value) {
    if (!is_int(item)) throw py::type_error(key + ": expected ints, got " + repr_text(item));
    out.push_back(item.cast<int64_t>());
  }
  return out;
}

/// The "caps" key: flag names or an int of PC_CAP_* bits.
uint64_t flags(const py::handle& value, const std::string& key) {
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    return value.cast<uint64_t>();
  }
  static const std::map<std::string, uint64_t> bits = flag_bits();
  uint64_t mask = 0;
  for (const auto& name : strings(value, key)) {
    const auto it = bits.find(name.get<std::string>());
    if (it == bits.end()) {
      std::string known;
      for (const auto& [n, b] : bits) known += (known.empty() ? "" : ", ") + n;
      throw py::value_error(key + ": unknown flag '" + name.get<std::string>() +
                            "' (known: " + known + ")");
    }
    mask |= it->second;
  }
  return mask;
}

}  // namespace

verify::gen::VariantCaps read_caps(const py::handle& family, const py::handle& caps,
                                   const std::string& default_name) {
  if (!py::isinstance<py::str>(family)) {
    throw py::type_error(
        "family: expected 'paged_attention', 'gather_cached_kv' or "
        "'reshape_and_cache', got " +
        repr_text(family));
  }
  json j{{"name", default_name}, {"caps", 0}};
  try {
    j["family"] = family_name(parse_family(family.cast<std::string>()));
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("family: ") + e.what());
  }
  const py::dict d = caps_dict(caps);
  static const std::set<std::string> string_lists{"dtypes", "kv_dtypes", "cache_kinds",
                                                  "scale_kinds"};
  static const std::set<std::string> int_lists{"head_sizes", "block_sizes", "partition_sizes"};
  for (const auto& [k, value] : d) {
    if (!py::isinstance<py::str>(k))
      throw py::type_error("caps: keys must be str, got " + repr_text(k));
    const std::string name = k.cast<std::string>();
    const std::string key = "caps['" + name + "']";
    if (string_lists.count(name)) {
      j[name] = strings(value, key);
    } else if (int_lists.count(name)) {
      j[name] = integers(value, key);
    } else if (name == "caps") {
      j[name] = flags(value, key);
    } else if (name == "name" || name == "context0") {
      if (!py::isinstance<py::str>(value)) throw py::type_error(key + ": expected a str");
      j[name] = value.cast<std::string>();
    } else if (name == "max_query_len") {
      j[name] = integers(value, key).at(0);
    } else if (name == "nondeterministic") {
      if (!py::isinstance<py::bool_>(value)) throw py::type_error(key + ": expected a bool");
      j[name] = value.cast<bool>();
    } else if (name == "precision") {
      if (!py::isinstance<py::dict>(value)) throw py::type_error(key + ": expected a dict");
      j[name] = json::parse(py::module_::import("json").attr("dumps")(value).cast<std::string>());
    } else if (name == "family") {
      continue;  // the family argument decides; a caps dict may carry it for the record
    } else {
      throw py::value_error("caps: unknown key '" + name +
                            "' (keys: dtypes, kv_dtypes, cache_kinds, scale_kinds, head_sizes, "
                            "block_sizes, caps, name, max_query_len, partition_sizes, context0, "
                            "nondeterministic, precision)");
    }
  }
  for (const char* required : {"dtypes", "head_sizes", "block_sizes"}) {
    if (!j.contains(required)) {
      throw py::value_error(std::string("caps: missing '") + required + "'");
    }
  }
  verify::gen::VariantCaps out;
  try {
    out = j.get<verify::gen::VariantCaps>();
    out.validate();
  } catch (const std::exception& e) {
    throw py::value_error(std::string("caps: ") + e.what());
  }
  return out;
}

}  // namespace pagecheck::python
