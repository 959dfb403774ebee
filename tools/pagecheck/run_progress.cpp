/// Progress lines and the SIGINT flag.
#include "run_progress.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace pagecheck::cli {
namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process
}

/// Seconds between progress lines on a non-terminal stdout.
double progress_interval_s() {
  const char* text = std::getenv("PAGECHECK_PROGRESS_INTERVAL");
  if (text == nullptr) return 10;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && v > 0 ? v : 10;
}

/// The part of a progress text before its first digit: lines of one phase share it.
std::string phase_of(const std::string& text) {
  const std::size_t digit = text.find_first_of("0123456789");
  return text.substr(0, digit);
}

}  // namespace

std::function<void(const std::string&)> progress_printer() {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const bool log = isatty(STDOUT_FILENO) == 0;
  if (!terminal && !log) return {};
  struct State {
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    std::string phase;
  };
  auto state = std::make_shared<State>();
  const double interval = progress_interval_s();
  return [terminal, log, state, interval](const std::string& text) {
    if (terminal) {
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
      if (text.empty()) std::fprintf(stderr, "\r");
      std::fflush(stderr);
    }
    if (!log || text.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    const std::string phase = phase_of(text);
    const bool due = std::chrono::duration<double>(now - state->last).count() >= interval;
    if (!due && phase == state->phase) return;
    state->last = now;
    state->phase = phase;
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  };
}

void catch_interrupt() {
  static const bool installed = [] {
    // An ignored SIGINT (nohup, `cmd &` in a script) stays ignored, as for any Unix tool.
    if (std::signal(SIGINT, on_sigint) == SIG_IGN) std::signal(SIGINT, SIG_IGN);
    return true;
  }();
  (void)installed;
}

bool interrupted() {
  return g_interrupted.load();
}

}  // namespace pagecheck::cli
