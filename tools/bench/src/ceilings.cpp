/// Copy and read ceilings and the launch floor, timed exactly like the kernels (cold, CUDA
/// events). Each ceiling is the best of a sweep (issue 17): a ceiling that a kernel exceeds is
/// not a ceiling.
#include "ceilings.h"

#include <string>

#include "bench_kernels.h"
#include "pagecheck/bench/render.h"

namespace pagecheck::bench::detail {

namespace {

/// The sweep of both ceilings: unroll {1, 2, 4, 8} x threads {256, 512, 1024}.
constexpr int kUnrolls[] = {1, 2, 4, 8};
constexpr int kThreads[] = {256, 512, 1024};

std::string config_text(const StreamConfig& c) {
  return "unroll " + std::to_string(c.unroll) + ", " + std::to_string(c.threads) + " threads";
}

/// The sweep's description and its winner, for CeilingResult::method.
std::string sweep_text(const char* what, int64_t bytes, const std::string& winner) {
  return std::string(what) + " of " + format_bytes(bytes) +
         " with 16-byte accesses, best of unroll {1, 2, 4, 8} x threads {256, 512, 1024}" +
         " (2048 threads per SM): " + winner;
}

/// Keeps the faster of `best` and a new measurement.
void keep_best(Measurement& best, std::string& best_name, bool& have, const Measurement& m,
               const std::string& name) {
  if (!have || m.time_us.median < best.time_us.median) {
    best = m;
    best_name = name;
    have = true;
  }
}

}  // namespace

CeilingResult measure_copy_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed) {
  bytes -= bytes % 16;
  DeviceBuffer src(static_cast<std::size_t>(bytes));
  DeviceBuffer dst(static_cast<std::size_t>(bytes));
  fill_random(src.get(), bytes / 4, PC_DTYPE_FLOAT32, seed, -1.0f, 1.0f, stream);
  Measurement best;
  std::string winner;
  bool have = false;
  keep_best(best, winner, have,
            timer.measure(
                [&](cudaStream_t s) {
                  PAGECHECK_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), src.bytes(),
                                                       cudaMemcpyDeviceToDevice, s));
                },
                settings),
            "cudaMemcpyAsync device to device");
  for (int unroll : kUnrolls) {
    for (int threads : kThreads) {
      const StreamConfig c{unroll, threads};
      keep_best(
          best, winner, have,
          timer.measure(
              [&](cudaStream_t s) { copy_stream(dst.get(), src.get(), bytes, num_sms, c, s); },
              settings),
          "copy kernel, " + config_text(c));
    }
  }
  CeilingResult r;
  r.kind = "copy";
  r.method = sweep_text("cudaMemcpyAsync and a copy kernel", bytes, winner) +
             "; counting bytes read + written";
  r.bytes = 2 * bytes;
  r.time_us = best.time_us;
  r.gbps = bandwidth_gbps(r.bytes, best.time_us.median);
  return r;
}

CeilingResult measure_read_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed) {
  bytes -= bytes % 16;
  DeviceBuffer data(static_cast<std::size_t>(bytes));
  DeviceBuffer sink(sizeof(unsigned int));
  fill_random(data.get(), bytes / 4, PC_DTYPE_FLOAT32, seed + 1, -1.0f, 1.0f, stream);
  Measurement best;
  std::string winner;
  bool have = false;
  for (int unroll : kUnrolls) {
    for (int threads : kThreads) {
      const StreamConfig c{unroll, threads};
      keep_best(best, winner, have,
                timer.measure(
                    [&](cudaStream_t s) {
                      read_stream(data.get(), bytes, sink.as<unsigned int>(), num_sms, c, s);
                    },
                    settings),
                config_text(c));
    }
  }
  CeilingResult r;
  r.kind = "read";
  r.method = sweep_text("streaming reduction", bytes, winner) + "; writing almost nothing";
  r.bytes = bytes;
  r.time_us = best.time_us;
  r.gbps = bandwidth_gbps(r.bytes, best.time_us.median);
  return r;
}

LaunchFloor measure_launch_floor(ColdTimer& timer, const MeasureSettings& settings) {
  LaunchFloor f;
  f.method =
      "an empty kernel, one block of 32 threads, timed like the kernels (cold L2, CUDA events)";
  f.time_us = timer.measure([](cudaStream_t s) { empty_launch(s); }, settings).time_us;
  return f;
}

}  // namespace pagecheck::bench::detail
