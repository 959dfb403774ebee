/// `pagecheck golden show FILE`: parameters and dataset summaries.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>

#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {

void show_golden(const std::string& path, std::ostream& out) {
  const LoadedGolden g = load_golden(path);
  out << "golden " << g.name << ": " << g.description << "\n";
  out << "file   " << path << "\n";
  out << "case (root attribute spec; reproduce with pagecheck verify --reproduce-spec):\n";
  std::istringstream described(gen::describe(g.spec));
  for (std::string line; std::getline(described, line);) out << "  " << line << "\n";
  out << "attributes:\n";
  for (const auto& [name, value] : g.raw.attrs) {
    if (name == "spec") continue;  // shown above
    out << "  " << std::left << std::setw(28) << name << attr_to_string(value) << "\n";
  }
  out << "datasets (schema-validated, SHA-256 verified):\n";
  for (const GoldenDataset& d : g.raw.datasets) {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    int64_t nan = 0;
    int64_t zeros = 0;
    const int64_t n = d.num_elements();
    for (int64_t i = 0; i < n; ++i) {
      const double v = element_as_double(d.type, d.bytes.data(), i);
      if (std::isnan(v)) {
        ++nan;
        continue;
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      zeros += v == 0 ? 1 : 0;
    }
    out << "  " << std::left << std::setw(22) << d.path << std::setw(9) << element_type_name(d.type)
        << std::setw(22) << attr_to_string(d.dims);
    out << std::setprecision(6) << "min " << lo << " max " << hi << ", " << nan << " NaN, " << zeros
        << " zero";
    const auto shape = d.attrs.find("logical_shape");
    if (shape != d.attrs.end() && attr_to_string(shape->second) != attr_to_string(d.dims)) {
      out << ", logical " << attr_to_string(shape->second) << " strides "
          << attr_to_string(d.attrs.at("strides"));
    }
    out << ", sha256 " << attr_to_string(d.attrs.at("sha256")).substr(0, 16) << "...\n";
  }
}

}  // namespace pagecheck::verify::golden
