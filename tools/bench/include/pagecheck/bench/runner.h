#pragma once
/// Runs a sweep on the GPU and builds the bandwidth report: ceilings first, then for each shape
/// fresh random device inputs, an output check and cold timing of every variant.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"

namespace pagecheck::bench {

/// Sampling and device settings of a bench run.
struct BenchOptions {
  int device = 0;             ///< CUDA device index
  int64_t warmup = 3;         ///< untimed launches per measurement (after the output check)
  int64_t min_samples = 20;   ///< cold samples taken at least
  int64_t max_samples = 400;  ///< cold samples taken at most
  double max_noise = 0.02;    ///< stop once IQR / median is at most this (and min_samples met)
  double timeout_s = 1.5;     ///< wall-time cap of one measurement's sampling loop
  uint64_t seed = 1;          ///< seed of inputs and block tables
  int64_t ceiling_bytes = 4ll << 30;  ///< buffer size of the copy and read ceilings (issue 17:
                                      ///< the sweeps run on at least 4 GiB)
  double ceiling_tolerance =
      kCeilingTolerance;  ///< flag results above this multiple of the ceiling
  /// Throws std::invalid_argument naming the option when a value is out of range.
  void validate() const;
};

/// True when this build has CUDA and a device can be used; else `reason` says why.
bool bench_device_available(std::string* reason = nullptr);

/// Device and software description of device `options.device` (clocks from nvidia-smi when it
/// is installed, else peak clocks from the CUDA attributes). Throws CudaError without a device.
Environment query_environment(int device);

/// Benchmarks `variants` (names of `family` in `registry`) over `shapes`. Fills environment,
/// method, ceilings, variants and shapes of the report; provenance fields (tool_version,
/// source_hash, git_revision, date, sweep) are the caller's. Progress lines go to `log` when
/// it is not null. Throws std::invalid_argument for an unknown variant or a shape of another
/// family, pagecheck::CudaError when the device fails (e.g. a sticky error after a launch).
/// A variant that refuses a shape is recorded as unsupported; one whose launch fails or whose
/// output is not written entirely is recorded as failed and not timed.
BenchReport run_bench(const VariantRegistry& registry, pc_family family,
                      const std::vector<std::string>& variants,
                      const std::vector<BenchShape>& shapes, const BenchOptions& options,
                      std::ostream* log);

}  // namespace pagecheck::bench
