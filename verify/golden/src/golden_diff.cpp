/// Where two golden files differ: attributes, dataset presence, types, shapes and values.
#include <cmath>
#include <cstring>
#include <ostream>
#include <set>
#include <sstream>

#include "golden_compare.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  return attr_to_string(dims);
}

/// "a vs b", or for long texts (the spec JSON) the neighbourhood of their first difference.
std::string versus(const AttrValue& a, const AttrValue& b) {
  const std::string ta = attr_to_string(a), tb = attr_to_string(b);
  constexpr std::size_t kLong = 120, kContext = 40;
  if (ta.size() <= kLong && tb.size() <= kLong) return ta + " vs " + tb;
  std::size_t at = 0;
  while (at < ta.size() && at < tb.size() && ta[at] == tb[at]) ++at;
  const std::size_t from = at > kContext ? at - kContext : 0;
  const auto part = [&](const std::string& t) {
    return (from > 0 ? "..." : "") + t.substr(from, 2 * kContext) +
           (from + 2 * kContext < t.size() ? "..." : "");
  };
  return "differ from character " + std::to_string(at) + ": " + part(ta) + " vs " + part(tb);
}

void diff_attrs(const std::string& where, const std::map<std::string, AttrValue>& a,
                const std::map<std::string, AttrValue>& b, bool skip_sha,
                std::vector<std::string>* out) {
  std::set<std::string> names;
  for (const auto& [name, value] : a) names.insert(name);
  for (const auto& [name, value] : b) names.insert(name);
  for (const std::string& name : names) {
    if (skip_sha && name == "sha256") continue;
    const auto ia = a.find(name);
    const auto ib = b.find(name);
    const std::string label = where + "attribute " + name;
    if (ib == b.end()) {
      out->push_back(label + ": only in A");
    } else if (ia == a.end()) {
      out->push_back(label + ": only in B");
    } else if (ia->second != ib->second) {
      out->push_back(label + ": " + versus(ia->second, ib->second));
    }
  }
}

}  // namespace

std::string diff_values(const GoldenDataset& a, const GoldenDataset& b) {
  const std::size_t size = element_size(a.type);
  const int64_t n = a.num_elements();
  int64_t differing = 0;
  int64_t nonfinite = 0;
  int64_t first = -1;
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(a.bytes.data() + i * size, b.bytes.data() + i * size, size) == 0) continue;
    ++differing;
    if (first < 0) first = i;
    const double va = element_as_double(a.type, a.bytes.data(), i);
    const double vb = element_as_double(b.type, b.bytes.data(), i);
    if (std::isfinite(va) && std::isfinite(vb)) {
      max_abs = std::max(max_abs, std::fabs(va - vb));
    } else {
      ++nonfinite;
    }
  }
  if (differing == 0) return "";
  std::ostringstream text;
  text.precision(9);
  text << differing << " of " << n << " elements differ, max abs diff " << max_abs;
  if (nonfinite > 0) text << " (" << nonfinite << " with a NaN/inf on one side)";
  text << ", first at flat index " << first << ": "
       << element_as_double(a.type, a.bytes.data(), first) << " vs "
       << element_as_double(b.type, b.bytes.data(), first);
  return text.str();
}

std::string compare_f64(const std::vector<double>& want, const std::vector<double>& got,
                        double rel) {
  if (want.size() != got.size()) {
    return "size " + std::to_string(got.size()) + " instead of " + std::to_string(want.size());
  }
  double scale = 0;
  for (double w : want) {
    if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
  }
  const double bound = rel * scale;
  int64_t beyond = 0;
  int64_t worst = -1;
  double worst_err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;  // equal infinities (the lse of an empty row) included
    const double err = std::fabs(got[i] - want[i]);
    if (err <= bound) continue;  // NaN compares false: counted below
    ++beyond;
    if (worst < 0 || !(err <= worst_err)) worst = static_cast<int64_t>(i), worst_err = err;
  }
  if (beyond == 0) return "";
  std::ostringstream text;
  text.precision(17);
  text << beyond << " of " << want.size() << " elements beyond " << rel
       << " * max|want| = " << bound << "; worst at flat index " << worst << ": want "
       << want[worst] << ", got " << got[worst];
  return text.str();
}

std::vector<std::string> describe_differences(const GoldenFile& a, const GoldenFile& b) {
  std::vector<std::string> out;
  diff_attrs("", a.attrs, b.attrs, false, &out);
  std::set<std::string> seen;
  for (const GoldenDataset& da : a.datasets) {
    seen.insert(da.path);
    const GoldenDataset* db = b.find(da.path);
    if (db == nullptr) {
      out.push_back(da.path + ": only in A");
      continue;
    }
    if (da.type != db->type) {
      out.push_back(da.path + ": dtype " + element_type_name(da.type) + " vs " +
                    element_type_name(db->type));
    } else if (da.dims != db->dims) {
      out.push_back(da.path + ": shape " + dims_text(da.dims) + " vs " + dims_text(db->dims));
    } else if (std::string values = diff_values(da, *db); !values.empty()) {
      out.push_back(da.path + ": " + values);
    }
    diff_attrs(da.path + ": ", da.attrs, db->attrs, true, &out);
  }
  for (const GoldenDataset& db : b.datasets) {
    if (seen.count(db.path) == 0) out.push_back(db.path + ": only in B");
  }
  return out;
}

int diff_goldens(const std::string& a, const std::string& b, std::ostream& out) {
  const GoldenFile fa = read_golden_file(a);
  const GoldenFile fb = read_golden_file(b);
  const std::vector<std::string> lines = describe_differences(fa, fb);
  if (lines.empty()) {
    out << "identical content: " << a << " and " << b << "\n";
    return 0;
  }
  out << "A = " << a << "\nB = " << b << "\n";
  for (const std::string& line : lines) out << "  " << line << "\n";
  out << lines.size() << " difference(s)\n";
  return 1;
}

}  // namespace pagecheck::verify::golden
