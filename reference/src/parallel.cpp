/// The task pool of parallel.h.
#include "pagecheck/reference/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pagecheck::ref {

void run_tasks(int64_t num_tasks, int64_t num_threads,
               const std::function<std::function<void(int64_t)>()>& make_worker) {
  if (num_tasks <= 0) return;
  if (num_threads <= 0) num_threads = static_cast<int64_t>(std::thread::hardware_concurrency());
  num_threads = std::clamp<int64_t>(num_threads, 1, num_tasks);
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      const std::function<void(int64_t)> worker = make_worker();
      for (int64_t task = next++; task < num_tasks; task = next++) worker(task);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = num_tasks;
    }
  };
  std::vector<std::thread> threads;
  for (int64_t i = 1; i < num_threads; ++i) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace pagecheck::ref
