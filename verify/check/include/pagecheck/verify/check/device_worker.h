#pragma once
/// The GPU side of verification: a backend that runs registered variants through the device
/// runner, and the entry point of the `pagecheck verify-worker` process that owns it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pagecheck/registry.h"
#include "pagecheck/verify/check/backend.h"

namespace pagecheck::verify::check {

/// What a worker process serves.
struct WorkerOptions {
  int device = 0;                    ///< CUDA device index
  bool planted = false;              ///< also the planted variants (registry "planted")
  bool simulate = false;             ///< also the CPU simulations (registry "sim")
  std::vector<std::string> plugins;  ///< plugin libraries (registry "plugin")
};

/// A backend over named registries ("builtin", "planted", "plugin"), running variants with
/// run_paged_attention / run_gather_cached_kv / run_reshape_and_cache on the current device.
/// A CUDA exception during a run becomes a launch failure with a sticky error.
std::unique_ptr<CaseBackend> make_device_backend(
    std::vector<std::pair<std::string, const VariantRegistry*>> registries, int device);

/// Runs a worker process: selects the device, builds the registries, serves stdin/stdout.
int run_verify_worker(const WorkerOptions& options);

/// Command line that starts a worker of executable `exe` (which must route the first argument
/// "verify-worker" to run_verify_worker).
std::vector<std::string> worker_command(const std::string& exe, const WorkerOptions& options);

}  // namespace pagecheck::verify::check

#include <set>

#include "pagecheck/verify/check/verifier.h"

namespace pagecheck::verify::check {

/// The parent's view of the worker side: one worker started to say hello (device, variants),
/// and a factory for the executors of a run. The parent itself never calls CUDA.
class WorkerSession {
 public:
  /// Starts worker `exe verify-worker …` and asks it for its variants. `timeout_s` bounds each
  /// case. Throws std::runtime_error when the worker cannot be started.
  WorkerSession(std::string exe, WorkerOptions options, double timeout_s);

  /// True when the worker can run GPU variants; otherwise reason() says why.
  bool gpu_available() const { return gpu_available_; }
  const std::string& reason() const { return reason_; }
  const std::string& device() const { return device_; }
  /// Variants of the given registries, in the worker's order.
  std::vector<Target> targets(const std::set<std::string>& registries) const;
  /// Executor factory for run_verification (worker 0 reuses the hello worker).
  ExecutorFactory factory();
  /// Default number of parallel workers and reference threads for this machine.
  static int default_jobs();
  static int default_ref_threads(int jobs);

 private:
  std::vector<std::string> argv_;
  double timeout_s_;
  std::unique_ptr<CaseExecutor> first_;
  nlohmann::json hello_;
  bool gpu_available_ = false;
  std::string reason_, device_;
};

}  // namespace pagecheck::verify::check
