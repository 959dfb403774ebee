/// GPU backend over registries, and the verify-worker process entry.
#include "pagecheck/verify/check/device_worker.h"

#include <algorithm>
#include <csignal>
#include <exception>
#include <iostream>

#include "device_count.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/worker.h"
#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/planted.h"

namespace pagecheck::verify::check {
namespace {

/// A failed run whose CUDA context must be considered lost.
DeviceRunOutcome cuda_failure(const std::exception& e) {
  DeviceRunOutcome o;
  o.disposition = LaunchDisposition::kLaunchFailed;
  o.message = e.what();
  o.sticky_error = true;
  return o;
}

class DeviceBackend final : public CaseBackend {
 public:
  DeviceBackend(std::vector<std::pair<std::string, const VariantRegistry*>> registries,
                int device) {
    ok_ = device_available(&reason_);
    if (ok_) {
      try {
        select_device(device);
        description_ = device_description();
      } catch (const std::exception& e) {
        ok_ = false;
        reason_ = e.what();
      }
    }
    for (const auto& [name, registry] : registries) {
      for (const auto& info : registry->variants()) {
        BackendVariant v;
        v.registry = name;
        v.caps = gen::caps_of(*info);
        v.description = info->description;
        v.handle = info.get();
        variants_.push_back(std::move(v));
      }
    }
  }

  const std::vector<BackendVariant>& variants() const override { return variants_; }
  bool available(std::string* reason) const override {
    if (!ok_ && reason != nullptr) *reason = reason_;
    return ok_;
  }
  std::string description() const override { return description_; }
  int device_count() const override { return detail::visible_cuda_devices(); }

  AttentionRun run_attention(const BackendVariant& v, const ref::PagedAttentionProblem& p,
                             const ref::TokenLayout& out_layout, int run) override {
    DeviceRunOptions options = run_options(run);
    options.attention_out_layout = out_layout;
    try {
      return run_paged_attention(info(v), p, options);
    } catch (const std::invalid_argument&) {
      throw;  // a harness problem, reported as such
    } catch (const std::exception& e) {
      AttentionRun run;
      run.outcome = cuda_failure(e);
      return run;
    }
  }

  CopyRun run_gather(const BackendVariant& v, const ref::CacheCopyProblem& p, int run) override {
    return copy(v, p, true, run);
  }
  CopyRun run_reshape(const BackendVariant& v, const ref::CacheCopyProblem& p, int run) override {
    return copy(v, p, false, run);
  }

 private:
  /// Every run allocates, uploads and poisons afresh; the determinism re-run (run 1) uses the
  /// complement of the first run's guard pattern, so a kernel that happens to write the
  /// pattern's own bytes past an output is seen in one of the two runs.
  static DeviceRunOptions run_options(int run) {
    DeviceRunOptions options;
    if (run % 2 == 1) options.guard_pattern = static_cast<uint8_t>(~options.guard_pattern);
    return options;
  }
  static const VariantInfo& info(const BackendVariant& v) {
    return *static_cast<const VariantInfo*>(v.handle);
  }
  CopyRun copy(const BackendVariant& v, const ref::CacheCopyProblem& p, bool gather, int run) {
    const DeviceRunOptions options = run_options(run);
    try {
      return gather ? run_gather_cached_kv(info(v), p, options)
                    : run_reshape_and_cache(info(v), p, options);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::exception& e) {
      CopyRun run;
      run.outcome = cuda_failure(e);
      return run;
    }
  }

  bool ok_ = false;
  std::string reason_, description_;
  std::vector<BackendVariant> variants_;
};

}  // namespace

std::unique_ptr<CaseBackend> make_device_backend(
    std::vector<std::pair<std::string, const VariantRegistry*>> registries, int device) {
  return std::make_unique<DeviceBackend>(std::move(registries), device);
}

int run_verify_worker(const WorkerOptions& options) {
  // Ctrl-C reaches the whole process group: the parent stops the run and prints the partial
  // summary; its workers finish their case instead of dying as crashed cases.
  std::signal(SIGINT, SIG_IGN);
  VariantRegistry builtin, planted, plugins;
  std::vector<std::pair<std::string, const VariantRegistry*>> registries;
  try {
    register_builtin_kernels(builtin);
    registries.emplace_back("builtin", &builtin);
    if (options.planted) {
      register_planted_variants(planted);
      registries.emplace_back("planted", &planted);
    }
    for (const auto& path : options.plugins) plugins.load_plugin(path);
    if (!options.plugins.empty()) registries.emplace_back("plugin", &plugins);
  } catch (const std::exception& e) {
    std::cerr << "pagecheck verify-worker: " << e.what() << "\n";
    return 2;
  }
  std::unique_ptr<CaseBackend> device = make_device_backend(registries, options.device);
  std::vector<CaseBackend*> backends{device.get()};
  std::unique_ptr<CaseBackend> sim;
  if (options.simulate) {
    sim = make_sim_backend(false);
    backends.push_back(sim.get());
  }
  return worker_main(backends);
}

std::vector<std::string> worker_command(const std::string& exe, const WorkerOptions& options) {
  std::vector<std::string> argv{exe, "verify-worker", "--device", std::to_string(options.device)};
  if (options.planted) argv.push_back("--planted");
  if (options.simulate) argv.push_back("--simulate");
  for (const auto& p : options.plugins) {
    argv.push_back("--plugin");
    argv.push_back(p);
  }
  return argv;
}

}  // namespace pagecheck::verify::check

#include <thread>

namespace pagecheck::verify::check {

WorkerSession::WorkerSession(std::string exe, WorkerOptions options, double timeout_s)
    : argv_(worker_command(exe, options)), timeout_s_(timeout_s) {
  first_ = std::make_unique<WorkerProcess>(argv_, timeout_s_);
  hello_ = first_->hello();
  reason_ = hello_.value("reason", std::string());
  device_ = hello_.value("device", std::string());
  gpu_available_ = hello_.value("gpu_available", false);
  device_count_ = hello_.value("device_count", 0);
}

std::vector<Target> WorkerSession::targets(const std::set<std::string>& registries) const {
  std::vector<Target> out;
  for (const auto& v : hello_.at("variants")) {
    const std::string registry = v.at("registry").get<std::string>();
    if (registries.count(registry))
      out.push_back(Target{registry, v.at("caps").get<gen::VariantCaps>()});
  }
  return out;
}

ExecutorFactory WorkerSession::factory() {
  return [this](int worker) -> std::unique_ptr<CaseExecutor> {
    if (worker == 0 && first_) return std::move(first_);
    return std::make_unique<WorkerProcess>(argv_, timeout_s_);
  };
}

int WorkerSession::default_jobs() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(cores / 4, 1, 4);
}

int WorkerSession::default_ref_threads(int jobs) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, jobs));
}

}  // namespace pagecheck::verify::check
