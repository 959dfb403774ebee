#pragma once
/// Case executors: where the parent sends a case. WorkerProcess runs it in a child process
/// (the parent never touches CUDA; a faulting or hanging kernel costs a restart, not the run);
/// InlineExecutor runs it in this process (CPU simulations in tests).
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/verify/check/backend.h"
#include "pagecheck/verify/check/case_result.h"

namespace pagecheck::verify::check {

/// Runs cases somewhere.
class CaseExecutor {
 public:
  virtual ~CaseExecutor() = default;
  /// Runs one case; never throws for a kernel's misbehaviour (crash, hang, fault).
  virtual CaseResult run(const CaseRequest& request) = 0;
  /// Replays an artefact. Throws std::invalid_argument when the file is bad input.
  virtual CaseResult replay(const std::string& path, int ref_threads) = 0;
  /// The worker's hello answer (availability, device, variants).
  virtual nlohmann::json hello() = 0;
};

/// A child process speaking the worker protocol (see worker.h) on its stdin/stdout.
class WorkerProcess final : public CaseExecutor {
 public:
  /// `argv[0]` is the executable; `timeout_s` bounds each case.
  WorkerProcess(std::vector<std::string> argv, double timeout_s);
  ~WorkerProcess() override;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  CaseResult run(const CaseRequest& request) override;
  CaseResult replay(const std::string& path, int ref_threads) override;
  nlohmann::json hello() override;
  /// Processes started so far (1 + restarts).
  int starts() const { return starts_; }

 private:
  /// Sends one line and waits for the answer; on death or timeout fills `failure`.
  bool exchange(const std::string& line, double timeout_s, std::string* answer,
                CaseResult* failure);
  void start();
  void stop(bool force);

  std::vector<std::string> argv_;
  double timeout_s_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  ///< bytes read past the last newline
  int starts_ = 0;
};

/// Runs cases in this process on the given backends.
class InlineExecutor final : public CaseExecutor {
 public:
  explicit InlineExecutor(std::vector<CaseBackend*> backends) : backends_(std::move(backends)) {}
  CaseResult run(const CaseRequest& request) override;
  CaseResult replay(const std::string& path, int ref_threads) override;
  nlohmann::json hello() override;

 private:
  std::vector<CaseBackend*> backends_;
};

}  // namespace pagecheck::verify::check
