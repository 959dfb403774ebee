#pragma once
/// The GPU side of verification: a backend that runs registered variants through the device
/// runner, and the entry point of the `pagecheck verify-worker` process that owns it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pagecheck/registry.h"
#include "pagecheck/verify/check/backend.h"
#include "pagecheck/verify/check/devices.h"

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
  /// CUDA devices the worker sees (cudaGetDeviceCount; 0 without CUDA).
  int device_count() const { return device_count_; }
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
  int device_count_ = 0;
  std::string reason_, device_;
};

/// Workers on several GPUs (`verify --devices`): one WorkerSession per device, each started
/// with its own --device, and an executor factory that deals the executors out round robin
/// (executor w on devices()[device_slot_of(w, n)], as VerifyOptions::devices says).
class DeviceSessions {
 public:
  /// Starts a hello worker on each of `devices` (options.device is replaced by each index).
  /// A device whose worker does not start or has no usable GPU (unless options.simulate) is
  /// left out and named in dropped(); the run goes on with the others.
  DeviceSessions(const std::string& exe, WorkerOptions options, const std::vector<int>& devices,
                 double timeout_s);

  /// The devices in use, in the order given.
  const std::vector<DeviceSlot>& devices() const { return slots_; }
  /// "device 1 left out: <reason>" for each device that could not be used.
  const std::vector<std::string>& dropped() const { return dropped_; }
  /// True when no device is usable.
  bool empty() const { return sessions_.empty(); }
  /// The first usable device's session (its variants, availability); throws
  /// std::logic_error when empty().
  WorkerSession& first();
  /// Executor factory over every usable device (see the class comment).
  ExecutorFactory factory();

 private:
  std::vector<std::unique_ptr<WorkerSession>> sessions_;
  std::vector<DeviceSlot> slots_;
  std::vector<std::string> dropped_;
};

}  // namespace pagecheck::verify::check
