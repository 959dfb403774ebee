#pragma once
/// The bounds every report measures in the same run: the two bandwidth ceilings and the launch
/// floor.
#include "cold_timer.h"
#include "pagecheck/bench/report.h"

namespace pagecheck::bench::detail {

/// The copy ceiling: the fastest of a device-to-device cudaMemcpyAsync of `bytes` and a copy
/// kernel swept over unroll x threads (bytes moved = 2 x bytes: read + written). The method
/// text names the winner.
CeilingResult measure_copy_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed);
/// The read ceiling: the fastest streaming read of `bytes` with 16-byte loads and almost no
/// writes over unroll {1, 2, 4, 8} x threads {256, 512, 1024} (bytes moved = bytes); the
/// method text names the winning configuration.
CeilingResult measure_read_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed);

/// The launch floor: an empty kernel of one block of 32 threads, timed by `timer` like every
/// kernel (its L2 flush before each sample included).
LaunchFloor measure_launch_floor(ColdTimer& timer, const MeasureSettings& settings);

}  // namespace pagecheck::bench::detail
