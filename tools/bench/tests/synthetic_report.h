#pragma once
/// Builds bandwidth reports with chosen medians and noise for CPU tests (no GPU involved):
/// every number is derived from the arguments, so tests can state what they expect.
#include <string>
#include <vector>

#include "pagecheck/bench/report.h"
#include "pagecheck/bench/shapes.h"
#include "pagecheck/registry.h"

namespace pagecheck::bench::testing {

/// One synthetic measurement: median time (us) and relative noise (IQR / median).
struct Timing {
  double median_us;  ///< median
  double noise;      ///< (q3 - q1) / median
};

/// A summary with the given median and noise (q1/q3 symmetric around the median).
inline SampleSummary summary_of(Timing t, int64_t samples = 40) {
  SampleSummary s;
  s.samples = samples;
  s.median = t.median_us;
  s.q1 = t.median_us * (1 - t.noise / 2);
  s.q3 = t.median_us * (1 + t.noise / 2);
  s.min = s.q1 * 0.99;
  s.max = s.q3 * 1.01;
  s.mean = t.median_us;
  s.noise = t.noise;
  return s;
}

/// Sets result `v` of shape row `s` to `timing`, with what a run derives from it: GB/s, the
/// share of the family's ceiling and the above-ceiling flag.
inline void set_timing(BenchReport& r, std::size_t s, std::size_t v, Timing timing) {
  ShapeResult& sr = r.shapes[s];
  VariantResult& vr = sr.variants[v];
  vr.time_us = summary_of(timing);
  vr.gbps = bandwidth_gbps(sr.bytes.total(), vr.time_us.median);
  vr.ceiling_share = vr.gbps / r.family_ceiling().gbps;
  vr.above_ceiling = vr.ceiling_share > kCeilingTolerance;
}

/// Appends a row for `shape` with one result per variant of `r`, at `timings[variant]`.
inline void add_row(BenchReport& r, const BenchShape& shape, const std::vector<Timing>& timings) {
  ShapeResult sr;
  sr.shape = shape;
  sr.bytes = bytes_moved(shape);
  for (const std::string& name : r.variants) {
    VariantResult vr;
    vr.variant = name;
    sr.variants.push_back(vr);
  }
  r.shapes.push_back(sr);
  for (std::size_t v = 0; v < timings.size(); ++v)
    set_timing(r, r.shapes.size() - 1, v, timings[v]);
}

/// A gather_cached_kv report (or `family`'s) over `tokens`, with timings[variant][shape].
inline BenchReport make_report(const std::string& family, const std::string& hash,
                               const std::vector<std::string>& variants,
                               const std::vector<std::vector<Timing>>& timings) {
  BenchReport r;
  r.tool_version = "pagecheck test";
  r.family = family;
  r.source_hash = hash;
  r.git_revision = "0123456789abcdef0123456789abcdef01234567";
  r.date = "2025-01-01T00:00:00Z";
  r.sweep = "default";
  r.environment.device = "Test GPU";
  r.environment.compute_capability = "9.0";
  r.environment.sm_count = 132;
  r.environment.l2_bytes = 60 << 20;
  r.environment.memory_bytes = 1ll << 37;
  r.environment.pci_bus_id = "0000:01:00.0";
  r.environment.driver_version = "999.1";
  r.environment.cuda_driver_version = "13.0";
  r.environment.cuda_runtime_version = "13.0";
  r.environment.clock_source = "test";
  r.method.l2_flush_bytes = 120 << 20;
  r.method.warmup = 3;
  r.method.min_samples = 20;
  r.method.max_samples = 400;
  r.method.max_noise = 0.02;
  r.method.timeout_s = 1.5;
  r.method.seed = 7;
  r.copy_ceiling = {"copy", "test copy", 2ll << 30, summary_of({500.0, 0.01}), 0};
  r.copy_ceiling.gbps = bandwidth_gbps(r.copy_ceiling.bytes, 500.0);
  r.read_ceiling = {"read", "test read", 1ll << 30, summary_of({250.0, 0.01}), 0};
  r.read_ceiling.gbps = bandwidth_gbps(r.read_ceiling.bytes, 250.0);
  r.variants = variants;
  const pc_family fam = family == "paged_attention"    ? PC_FAMILY_PAGED_ATTENTION
                        : family == "gather_cached_kv" ? PC_FAMILY_GATHER_CACHED_KV
                                                       : PC_FAMILY_RESHAPE_AND_CACHE;
  const std::size_t num_shapes = timings.empty() ? 0 : timings.front().size();
  for (std::size_t s = 0; s < num_shapes; ++s) {
    ShapeResult sr;  // the shape only: add_row makes the row
    sr.shape =
        fam == PC_FAMILY_PAGED_ATTENTION
            ? attention_shape(1 + static_cast<int64_t>(s), 512, 40, 40, 128, 16, DType::kFloat16)
            : copy_shape(fam, int64_t{64} << s, 40, 128, 8, DType::kFloat16);
    std::vector<Timing> row;
    for (const auto& per_variant : timings) row.push_back(per_variant[s]);
    add_row(r, sr.shape, row);
  }
  return r;
}

/// A report of `family`'s whole built-in default sweep (fp16 storage), every variant at
/// `share` of the family's ceiling on every shape (noise 1%): a report recording accepts
/// (review::check_recordable).
inline BenchReport make_sweep_report(const std::string& family, const std::string& hash,
                                     const std::vector<std::string>& variants, double share = 0.5) {
  BenchReport r = make_report(family, hash, variants, {});
  for (const BenchShape& shape : builtin_sweep(parse_family(family), false, DType::kFloat16)) {
    // GB/s is inversely proportional to the time: the time at which it is `share` x ceiling.
    const double us =
        bandwidth_gbps(bytes_moved(shape).total(), 1.0) / (share * r.family_ceiling().gbps);
    add_row(r, shape, std::vector<Timing>(variants.size(), Timing{us, 0.01}));
  }
  return r;
}

}  // namespace pagecheck::bench::testing
