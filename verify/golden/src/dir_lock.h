#pragma once
/// Exclusive hold of a golden directory for `golden regen`: flock(2) on a lock file inside it,
/// and removal of the temporaries that interrupted regens left behind.
#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

namespace pagecheck::verify::golden {

/// Name of the lock file in a golden directory (.gitignore covers it).
inline constexpr const char* kLockName = ".pagecheck-golden.lock";

/// Holds an exclusive flock(2) on dir/.pagecheck-golden.lock from construction to destruction.
/// The lock belongs to the open file description, so two holders in one process (separate
/// DirLock objects) exclude each other too. The lock file stays (removing it would let a
/// waiter lock an unlinked file while a newcomer locks a new one).
class DirLock {
 public:
  /// Waits for the lock (printing one line to `out` when another regen holds it). Throws
  /// std::invalid_argument naming the lock file when it cannot be created or opened (a
  /// read-only directory), std::runtime_error when flock fails otherwise.
  DirLock(const std::string& dir, std::ostream& out);
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  /// When the lock was acquired (system clock).
  std::chrono::system_clock::time_point acquired_at() const { return acquired_at_; }

 private:
  int fd_ = -1;
  std::chrono::system_clock::time_point acquired_at_;
};

/// A temporary file of a golden directory: ".NAME.PID.pagecheck-tmp" (today's names) or
/// ".NAME.tmp-PID" (older pagecheck builds). Returns false for any other name; else sets `pid`.
bool parse_temporary_name(const std::string& file_name, long* pid);

/// Removes the temporaries of `dir` that no running regen owns: those whose PID no longer runs
/// and those last modified before `lock.acquired_at()` (every regen writes its temporaries
/// while holding the lock, so one older than the current holder's lock is left over). Prints
/// one line per removed file to `out`; returns the removed paths.
std::vector<std::string> remove_stale_temporaries(const std::string& dir, const DirLock& lock,
                                                  std::ostream& out);

}  // namespace pagecheck::verify::golden
