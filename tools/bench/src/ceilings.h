#pragma once
/// The two bandwidth ceilings every report measures in the same run.
#include "cold_timer.h"
#include "pagecheck/bench/report.h"

namespace pagecheck::bench::detail {

/// Device-to-device cudaMemcpyAsync of `bytes` (bytes moved = 2 x bytes: read + written).
CeilingResult measure_copy_ceiling(ColdTimer& timer, int64_t bytes, const MeasureSettings& settings,
                                   cudaStream_t stream, uint64_t seed);
/// Streaming read of `bytes` with 16-byte loads and almost no writes (bytes moved = bytes).
CeilingResult measure_read_ceiling(ColdTimer& timer, int64_t bytes, int num_sms,
                                   const MeasureSettings& settings, cudaStream_t stream,
                                   uint64_t seed);

}  // namespace pagecheck::bench::detail
