/// Copy and read ceilings, timed exactly like the kernels (cold, CUDA events).
#include "ceilings.h"

#include "bench_kernels.h"
#include "pagecheck/bench/render.h"

namespace pagecheck::bench::detail {

CeilingResult measure_copy_ceiling(ColdTimer& timer, int64_t bytes, const MeasureSettings& settings,
                                   cudaStream_t stream, uint64_t seed) {
  DeviceBuffer src(static_cast<std::size_t>(bytes));
  DeviceBuffer dst(static_cast<std::size_t>(bytes));
  fill_random(src.get(), bytes / 4, PC_DTYPE_FLOAT32, seed, -1.0f, 1.0f, stream);
  const Measurement m = timer.measure(
      [&](cudaStream_t s) {
        PAGECHECK_CUDA_CHECK(
            cudaMemcpyAsync(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, s));
      },
      settings);
  CeilingResult c;
  c.kind = "copy";
  c.method = "cudaMemcpyAsync device to device of " + format_bytes(bytes) +
             ", counting bytes read + written";
  c.bytes = 2 * bytes;
  c.time_us = m.time_us;
  c.gbps = bandwidth_gbps(c.bytes, m.time_us.median);
  return c;
}

CeilingResult measure_read_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed) {
  bytes -= bytes % 16;
  DeviceBuffer data(static_cast<std::size_t>(bytes));
  DeviceBuffer sink(sizeof(unsigned int));
  fill_random(data.get(), bytes / 4, PC_DTYPE_FLOAT32, seed + 1, -1.0f, 1.0f, stream);
  const Measurement m = timer.measure(
      [&](cudaStream_t s) { read_stream(data.get(), bytes, sink.as<unsigned int>(), num_sms, s); },
      settings);
  CeilingResult c;
  c.kind = "read";
  c.method = "streaming reduction of " + format_bytes(bytes) +
             " with 16-byte loads, writing almost nothing";
  c.bytes = bytes;
  c.time_us = m.time_us;
  c.gbps = bandwidth_gbps(c.bytes, m.time_us.median);
  return c;
}

}  // namespace pagecheck::bench::detail
