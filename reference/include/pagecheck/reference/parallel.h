#pragma once
/// The one task pool of the CPU side: independent tasks handed out dynamically to threads, used
/// by the reference (one task per sequence and kv head) and by the tolerance model.
#include <cstdint>
#include <functional>

namespace pagecheck::ref {

/// Runs tasks [0, num_tasks) on `num_threads` threads (0 or less: the hardware concurrency;
/// clamped to [1, num_tasks]), the caller's thread included. Each thread calls make_worker()
/// once and then the function it returned once per task it takes, so a worker may keep scratch
/// buffers across tasks. The first exception stops the hand-out and is rethrown once every
/// thread has joined. Returns at once when num_tasks <= 0.
void run_tasks(int64_t num_tasks, int64_t num_threads,
               const std::function<std::function<void(int64_t)>()>& make_worker);

}  // namespace pagecheck::ref
