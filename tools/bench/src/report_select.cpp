/// Restricting a report to some of its variants (see report.h).
#include <algorithm>

#include "pagecheck/bench/report.h"

namespace pagecheck::bench {

BenchReport select_variants(const BenchReport& report, const std::vector<std::string>& keep) {
  const auto kept = [&](const std::string& v) {
    return std::find(keep.begin(), keep.end(), v) != keep.end();
  };
  BenchReport out = report;
  out.variants.clear();
  for (const auto& v : report.variants) {
    if (kept(v)) out.variants.push_back(v);
  }
  for (auto& sr : out.shapes) {
    sr.variants.erase(std::remove_if(sr.variants.begin(), sr.variants.end(),
                                     [&](const VariantResult& v) { return !kept(v.variant); }),
                      sr.variants.end());
  }
  return out;
}

}  // namespace pagecheck::bench
