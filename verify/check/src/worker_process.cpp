/// Worker child processes: spawn, JSON-line exchange with a deadline, restart after death.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "pagecheck/verify/check/case_runner.h"
#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/worker.h"

extern char** environ;

namespace pagecheck::verify::check {
namespace {

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (status " + std::to_string(status) + ")";
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

WorkerProcess::WorkerProcess(std::vector<std::string> argv, double timeout_s)
    : argv_(std::move(argv)), timeout_s_(timeout_s) {
  if (argv_.empty()) throw std::invalid_argument("WorkerProcess: empty command");
  signal(SIGPIPE, SIG_IGN);  // a dead worker must not kill the parent on write
}

WorkerProcess::~WorkerProcess() {
  stop(false);
}

void WorkerProcess::start() {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("worker: pipe failed: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv_[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    throw std::runtime_error("worker: cannot start " + argv_[0] + ": " + std::strerror(rc));
  }
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  pending_.clear();
  ++starts_;
}

void WorkerProcess::stop(bool force) {
  if (pid_ < 0) return;
  if (!force) write_all(to_child_, "{\"op\":\"quit\"}\n");
  ::close(to_child_);
  ::close(from_child_);
  to_child_ = from_child_ = -1;
  int status = 0;
  // Give a quitting worker a moment, then make sure it is gone.
  for (int i = 0; i < 50 && !force; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    usleep(20000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

bool WorkerProcess::exchange(const std::string& line, double timeout_s, std::string* answer,
                             CaseResult* failure) {
  if (pid_ < 0) start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto died = [&](Outcome outcome, const std::string& what) {
    int status = 0;
    std::string how;
    if (outcome == Outcome::kTimeout) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      how = what;
    } else {
      waitpid(pid_, &status, 0);
      how = what + ": worker " + exit_text(status);
    }
    ::close(to_child_);
    ::close(from_child_);
    to_child_ = from_child_ = -1;
    pid_ = -1;
    failure->outcome = outcome;
    failure->message = how;
    failure->restart = true;
    return false;
  };
  if (!write_all(to_child_, line + "\n")) return died(Outcome::kCrashed, "request not delivered");
  char buffer[65536];
  while (true) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *answer = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::ostringstream os;
      os << "no answer within " << timeout_s << " s (worker killed)";
      return died(Outcome::kTimeout, os.str());
    }
    pollfd pfd{from_child_, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died(Outcome::kCrashed, "the case ended the worker");
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

CaseResult WorkerProcess::run(const CaseRequest& request) {
  const nlohmann::json msg{{"op", "run"}, {"request", request}};
  std::string answer;
  CaseResult failure;
  if (!exchange(msg.dump(), timeout_s_, &answer, &failure)) return failure;
  try {
    CaseResult r = nlohmann::json::parse(answer).get<CaseResult>();
    if (r.restart) stop(false);  // the worker exits after such an answer
    return r;
  } catch (const std::exception& e) {
    stop(true);
    failure.outcome = Outcome::kError;
    failure.message = std::string("unreadable worker answer: ") + e.what();
    return failure;
  }
}

CaseResult WorkerProcess::replay(const std::string& path, int ref_threads) {
  const nlohmann::json msg{{"op", "replay"}, {"file", path}, {"ref_threads", ref_threads}};
  std::string answer;
  CaseResult failure;
  if (!exchange(msg.dump(), timeout_s_, &answer, &failure)) return failure;
  const nlohmann::json j = nlohmann::json::parse(answer);
  CaseResult r = j.get<CaseResult>();
  if (j.value("bad_input", false)) throw std::invalid_argument(r.message);
  if (r.restart) stop(false);
  return r;
}

nlohmann::json WorkerProcess::hello() {
  std::string answer;
  CaseResult failure;
  if (!exchange("{\"op\":\"hello\"}", std::max(timeout_s_, 60.0), &answer, &failure)) {
    throw std::runtime_error("worker did not answer hello: " + failure.message);
  }
  return nlohmann::json::parse(answer);
}

CaseResult InlineExecutor::run(const CaseRequest& request) {
  return run_case(backends_, request);
}

CaseResult InlineExecutor::replay(const std::string& path, int ref_threads) {
  return replay_artifact(backends_, path, ref_threads);
}

nlohmann::json InlineExecutor::hello() {
  std::istringstream in("{\"op\":\"hello\"}\n");
  std::ostringstream out;
  serve_worker(in, out, backends_);
  return nlohmann::json::parse(out.str());
}

}  // namespace pagecheck::verify::check
