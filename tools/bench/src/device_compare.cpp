/// Comparing one sweep across devices (see device_compare.h).
#include "pagecheck/bench/device_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "pagecheck/bench/render.h"

namespace pagecheck::bench {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void check_same_sweep(const BenchReport& first, const BenchReport& r, std::size_t device) {
  const std::string where = "device report " + std::to_string(device) + ": ";
  if (r.family != first.family) {
    throw ReportError(where + "family " + r.family + ", the first is " + first.family);
  }
  if (r.variants != first.variants) throw ReportError(where + "other variants than the first");
  if (r.shapes.size() != first.shapes.size()) {
    throw ReportError(where + std::to_string(r.shapes.size()) + " shapes, the first has " +
                      std::to_string(first.shapes.size()));
  }
  for (std::size_t s = 0; s < r.shapes.size(); ++s) {
    if (r.shapes[s].shape.label != first.shapes[s].shape.label) {
      throw ReportError(where + "shape " + std::to_string(s) + " is " + r.shapes[s].shape.label +
                        ", the first report's is " + first.shapes[s].shape.label);
    }
  }
}

}  // namespace

DeviceComparison compare_devices(const std::vector<BenchReport>& per_device) {
  DeviceComparison out;
  if (per_device.empty()) return out;
  const BenchReport& first = per_device.front();
  for (std::size_t d = 1; d < per_device.size(); ++d) check_same_sweep(first, per_device[d], d);
  const std::size_t devices = per_device.size();
  out.gaps.assign(devices, {});
  out.flagged.assign(devices, 0);
  for (std::size_t d = 0; d < devices; ++d) {
    out.gaps[d].resize(first.shapes.size());
    for (std::size_t s = 0; s < first.shapes.size(); ++s) {
      out.gaps[d][s].resize(first.variants.size());
    }
  }
  for (std::size_t s = 0; s < first.shapes.size(); ++s) {
    for (std::size_t v = 0; v < first.variants.size(); ++v) {
      const std::string& name = first.variants[v];
      std::vector<const VariantResult*> results(devices);
      for (std::size_t d = 0; d < devices; ++d) {
        const VariantResult* r = per_device[d].shapes[s].find(name);
        results[d] =
            r != nullptr && r->status == RunStatus::kOk && r->time_us.median > 0 ? r : nullptr;
      }
      for (std::size_t d = 0; d < devices; ++d) {
        if (results[d] == nullptr) continue;
        std::vector<double> medians{results[d]->time_us.median};
        double others_noise = 0;
        for (std::size_t o = 0; o < devices; ++o) {
          if (o == d || results[o] == nullptr) continue;
          medians.push_back(results[o]->time_us.median);
          others_noise = std::max(others_noise, results[o]->time_us.noise);
        }
        if (medians.size() < 2) continue;  // measured on no other device
        DeviceGap& g = out.gaps[d][s][v];
        g.compared = true;
        g.reference_us = median_of(medians);
        g.others_noise = others_noise;
        g.gap = results[d]->time_us.median / g.reference_us - 1;
        g.flagged = std::fabs(g.gap) > std::max(results[d]->time_us.noise, others_noise);
        out.flagged[d] += g.flagged ? 1 : 0;
      }
    }
  }
  return out;
}

std::string render_device_tables(const std::vector<BenchReport>& per_device,
                                 const std::vector<int>& indices,
                                 const DeviceComparison& comparison) {
  std::ostringstream os;
  char line[256];
  for (std::size_t d = 0; d < per_device.size(); ++d) {
    const BenchReport& r = per_device[d];
    const int index = d < indices.size() ? indices[d] : static_cast<int>(d);
    os << (d == 0 ? "" : "\n") << "device " << index << ": " << r.environment.device << " ("
       << r.environment.pci_bus_id << "), " << r.family << "\n";
    std::snprintf(line, sizeof line, "  %-22s %-28s %12s %10s %8s  %s\n", "shape", "variant",
                  "median us", "GB/s", "noise", "vs others");
    os << line;
    for (std::size_t s = 0; s < r.shapes.size(); ++s) {
      for (std::size_t v = 0; v < r.variants.size(); ++v) {
        const VariantResult* res = r.shapes[s].find(r.variants[v]);
        if (res == nullptr) continue;
        std::string vs = status_name(res->status);
        if (res->status == RunStatus::kOk) {
          const DeviceGap& g = comparison.gaps.at(d).at(s).at(v);
          vs = "-";
          if (g.compared) {
            std::snprintf(line, sizeof line, "%+.1f%%%s", 100 * g.gap,
                          g.flagged ? (g.gap > 0 ? " OUTLIER (slower)" : " OUTLIER (faster)") : "");
            vs = line;
          }
        }
        const bool ok = res->status == RunStatus::kOk;
        std::snprintf(line, sizeof line, "  %-22s %-28s %12s %10s %8s  %s\n",
                      r.shapes[s].shape.label.c_str(), res->variant.c_str(),
                      ok ? format_number(res->time_us.median).c_str() : "-",
                      ok ? format_number(res->gbps).c_str() : "-",
                      ok ? format_percent(res->time_us.noise).c_str() : "-", vs.c_str());
        os << line;
      }
    }
  }
  for (std::size_t d = 0; d < per_device.size(); ++d) {
    if (comparison.flagged.at(d) == 0) continue;
    const int index = d < indices.size() ? indices[d] : static_cast<int>(d);
    os << "device " << index << ": " << comparison.flagged[d]
       << " result(s) more than their noise away from the other devices\n";
  }
  return os.str();
}

}  // namespace pagecheck::bench
