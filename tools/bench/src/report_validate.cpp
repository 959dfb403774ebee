/// Consistency checks of reports (see BenchReport::validate and require_measurements in
/// report.h): every number a comparison or a review relies on must agree with the others.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"

namespace pagecheck::bench {

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ReportError(where + ": " + what);
}

/// Relative slack for recomputed numbers: JSON keeps doubles exactly, so only rounding remains.
constexpr double kRelativeSlack = 1e-6;
/// Absolute slack of a bandwidth, for tools that round GB/s to two decimals.
constexpr double kGbpsSlack = 0.005;
/// Absolute slack of a ceiling share, for tools that round GB/s or the share.
constexpr double kShareSlack = 1e-4;

std::string num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool close(double a, double b, double absolute) {
  return std::fabs(a - b) <=
         std::max(absolute, kRelativeSlack * std::max(std::fabs(a), std::fabs(b)));
}

/// A measured timing summary: samples, positive median, min <= q1 <= median <= q3 <= max,
/// min <= mean <= max and noise = (q3 - q1) / median.
void check_summary(const SampleSummary& s, const std::string& where) {
  const auto below = [&](const char* a, double x, const char* b, double y) {
    if (x > y + kRelativeSlack * std::fabs(y)) {
      fail(where, std::string(a) + " " + num(x) + " is above " + b + " " + num(y) +
                      " (expected min <= q1 <= median <= q3 <= max)");
    }
  };
  if (s.samples <= 0) fail(where, "field 'samples' must be positive for a measured result");
  if (!(s.median > 0)) fail(where, "field 'median' must be a positive time, got " + num(s.median));
  if (!(s.min > 0)) fail(where, "field 'min' must be a positive time, got " + num(s.min));
  below("min", s.min, "q1", s.q1);
  below("q1", s.q1, "median", s.median);
  below("median", s.median, "q3", s.q3);
  below("q3", s.q3, "max", s.max);
  if (s.mean < s.min * (1 - kRelativeSlack) || s.mean > s.max * (1 + kRelativeSlack)) {
    fail(where, "field 'mean' " + num(s.mean) + " is outside [min, max] = [" + num(s.min) + ", " +
                    num(s.max) + "]");
  }
  const double noise = (s.q3 - s.q1) / s.median;
  if (!close(s.noise, noise, 1e-9)) {
    fail(where, "field 'noise' " + num(s.noise) + " is not (q3 - q1) / median = " + num(noise));
  }
}

/// `gbps` must be `bytes` / the median time, within rounding.
void check_gbps(double gbps, int64_t bytes, double median_us, const std::string& where) {
  const double expected = bandwidth_gbps(bytes, median_us);
  if (!close(gbps, expected, kGbpsSlack)) {
    fail(where, "field 'gbps' " + num(gbps) + " does not match " + std::to_string(bytes) +
                    " bytes in the median " + num(median_us) + " us (" + num(expected) + " GB/s)");
  }
}

/// The label and group the built-in sweeps give a shape with these parameters.
void check_label(const BenchShape& s, const std::string& where) {
  std::string group = "tokens", label = "t" + std::to_string(s.num_tokens);
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    group = s.num_heads == s.num_kv_heads ? "mha" : "gqa";
    label = group + "_b" + std::to_string(s.num_seqs) + "_c" + std::to_string(s.context_len);
  }
  group += shape_suffix(s);
  label += shape_suffix(s);
  if (s.group != group) {
    fail(where, "field 'group' is '" + s.group + "' but the shape's heads make it '" + group + "'");
  }
  if (s.label != label) {
    fail(where,
         "field 'label' is '" + s.label + "' but the shape's parameters make it '" + label + "'");
  }
}

void check_ceiling(const CeilingResult& c, const std::string& where) {
  if (c.time_us.samples == 0) return;  // not measured in this run
  if (c.bytes <= 0) fail(where, "field 'bytes' must be positive");
  check_summary(c.time_us, where + ".time_us");
  check_gbps(c.gbps, c.bytes, c.time_us.median, where);
}

/// The ceiling share and its flag must follow from GB/s and the family's ceiling.
void check_share(const VariantResult& v, const CeilingResult& ceiling, const std::string& where) {
  const double share = ceiling.gbps > 0 ? v.gbps / ceiling.gbps : 0.0;
  if (!close(v.ceiling_share, share, kShareSlack)) {
    fail(where, "field 'ceiling_share' " + num(v.ceiling_share) + " is not gbps / the " +
                    ceiling.kind + " ceiling's " + num(ceiling.gbps) + " GB/s = " + num(share));
  }
  if (v.above_ceiling != (v.ceiling_share > kCeilingTolerance)) {
    fail(where, std::string("field 'above_ceiling' is ") + (v.above_ceiling ? "true" : "false") +
                    " but the share " + num(v.ceiling_share) + " is " +
                    (v.above_ceiling ? "not above " : "above ") + num(kCeilingTolerance));
  }
}

/// The measurement settings a run could have used.
void check_method(const MethodSettings& m, const std::string& where) {
  if (!(m.max_noise >= 0)) fail(where, "field 'max_noise' must be >= 0, got " + num(m.max_noise));
  if (!(m.timeout_s > 0))
    fail(where, "field 'timeout_s' must be positive, got " + num(m.timeout_s));
  if (m.warmup < 0) fail(where, "field 'warmup' must be >= 0");
  if (m.min_samples <= 0) fail(where, "field 'min_samples' must be positive");
  if (m.max_samples < m.min_samples) fail(where, "field 'max_samples' is below 'min_samples'");
  if (m.l2_flush_bytes < 0) fail(where, "field 'l2_flush_bytes' must be >= 0");
}

}  // namespace

void BenchReport::validate(const std::string& origin) const {
  if (schema != kReportSchema) {
    fail(origin, "schema '" + schema + "' is not " + kReportSchema);
  }
  pc_family fam{};
  try {
    fam = parse_family(family);
  } catch (const std::invalid_argument& e) {
    fail(origin, e.what());
  }
  if (unit_name().find('/') != std::string::npos) fail(origin, "'unit' must not contain '/'");
  if (!identity_fields::is_hex64(source_hash)) {
    fail(origin, "field 'source_hash' '" + source_hash + "' is not 64 lowercase hex digits");
  }
  if (!identity_fields::is_iso8601_utc(date)) {
    fail(origin, "field 'date' '" + date + "' is not a UTC time YYYY-MM-DDTHH:MM:SSZ");
  }
  check_method(method, origin + ": method");
  check_ceiling(copy_ceiling, origin + ": ceilings.copy");
  check_ceiling(read_ceiling, origin + ": ceilings.read");
  if (launch_floor.measured())
    check_summary(launch_floor.time_us, origin + ": launch_floor.time_us");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& sr = shapes[i];
    const std::string where =
        origin + ": results[" + std::to_string(i) + "] '" + sr.shape.label + "'";
    if (sr.shape.family != fam) fail(where, "shape of another family in a " + family + " report");
    for (std::size_t k = 0; k < i; ++k) {
      if (shapes[k].shape.label == sr.shape.label) fail(where, "duplicate shape label");
    }
    check_label(sr.shape, where + ".shape");
    if (sr.bytes.read < 0 || sr.bytes.written < 0 || sr.bytes.total() <= 0) {
      fail(where,
           "fields 'bytes_read' and 'bytes_written' must be non-negative, with a positive "
           "sum");
    }
    for (std::size_t k = 0; k < sr.variants.size(); ++k) {
      const VariantResult& v = sr.variants[k];
      const std::string vw = where + ".variants[" + std::to_string(k) + "] '" + v.variant + "'";
      if (std::find(variants.begin(), variants.end(), v.variant) == variants.end()) {
        fail(where, "result for variant '" + v.variant + "' not listed in 'variants'");
      }
      for (std::size_t m = 0; m < k; ++m) {
        if (sr.variants[m].variant == v.variant) fail(vw, "second result for the variant");
      }
      if (v.status != RunStatus::kOk) continue;  // not timed
      check_summary(v.time_us, vw + ".time_us");
      check_gbps(v.gbps, sr.bytes.total(), v.time_us.median, vw);
      check_share(v, family_ceiling(), vw);
    }
  }
}

void require_measurements(const BenchReport& report, const std::string& origin) {
  if (report.shapes.empty()) fail(origin, "empty report: 'results' holds no shape");
  if (report.variants.empty()) fail(origin, "empty report: 'variants' names no variant");
  for (const auto& variant : report.variants) {
    const bool ran = std::any_of(report.shapes.begin(), report.shapes.end(), [&](const auto& sr) {
      const VariantResult* v = sr.find(variant);
      return v != nullptr && v->status == RunStatus::kOk;
    });
    if (!ran) {
      fail(origin, "variant '" + variant + "' was measured on none of the " +
                       std::to_string(report.shapes.size()) + " shapes (no result with status ok)");
    }
  }
}

}  // namespace pagecheck::bench
