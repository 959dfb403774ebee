/// Number formatting shared by the terminal table and the Markdown renderers.
#include <cmath>
#include <cstdio>

#include "pagecheck/bench/render.h"

namespace pagecheck::bench {

std::string format_number(double value) {
  char buf[64];
  const double a = std::fabs(value);
  if (a >= 100 || a == 0) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f", value);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", value);
  }
  return buf;
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f %s" : "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string format_percent(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

std::string result_flags(const VariantResult& r, const LaunchFloor& floor) {
  std::string flags;
  auto add = [&](const std::string& f) { flags += (flags.empty() ? "" : "; ") + f; };
  if (r.status != RunStatus::kOk) add(std::string(status_name(r.status)));
  if (marked_above_ceiling(r)) {
    add("ABOVE CEILING (" + format_percent(r.ceiling_share) +
        "): suspect the byte formula, caching or the timing");
  }
  if (marked_below_floor(r, floor)) {
    add("BELOW LAUNCH FLOOR (" + format_number(floor.time_us.median) + " us): suspect the timing");
  }
  if (r.status == RunStatus::kOk && !r.converged) {
    add("noisy: " + format_percent(r.time_us.noise) + " after " +
        std::to_string(r.time_us.samples) + " samples");
  }
  if (!r.message.empty()) add(r.message);
  return flags;
}

bool marked_above_ceiling(const VariantResult& r) {
  return r.status == RunStatus::kOk && r.above_ceiling;
}

bool marked_below_floor(const VariantResult& r, const LaunchFloor& floor) {
  return r.status == RunStatus::kOk && floor.measured() &&
         r.time_us.median < kFloorTolerance * floor.time_us.median;
}

std::vector<std::string> suspect_result_warnings(const BenchReport& report) {
  const CeilingResult& ceiling = report.family_ceiling();
  const LaunchFloor& floor = report.launch_floor;
  std::vector<std::string> lines;
  for (const ShapeResult& sr : report.shapes) {
    for (const VariantResult& v : sr.variants) {
      const std::string where = report.family + " " + sr.shape.label + " " + v.variant + ": ";
      if (marked_above_ceiling(v)) {
        lines.push_back(where + format_number(v.gbps) + " GB/s above the " + ceiling.kind +
                        " ceiling " + format_number(ceiling.gbps) + " GB/s (" +
                        format_percent(v.ceiling_share) + ")");
      }
      if (marked_below_floor(v, floor)) {
        lines.push_back(where + format_number(v.time_us.median) + " us below the launch floor " +
                        format_number(floor.time_us.median) + " us");
      }
    }
  }
  return lines;
}

}  // namespace pagecheck::bench
