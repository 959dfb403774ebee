/// flock(2) on a golden directory's lock file, and the cleanup of interrupted regens'
/// temporaries.
#include "dir_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>

#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::verify::golden {

namespace fs = std::filesystem;

DirLock::DirLock(const std::string& dir, std::ostream& out) {
  const std::string path = (fs::path(dir) / kLockName).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::invalid_argument(path + ": cannot create or open the lock file of the golden " +
                                "directory (read-only?): " + std::strerror(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error(path + ": flock: " + std::strerror(err));
    }
    out << "waiting for another regen of " << dir << " (" << path << ")\n" << std::flush;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error(path + ": flock: " + std::strerror(err));
    }
  }
  acquired_at_ = std::chrono::system_clock::now();
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

bool parse_temporary_name(const std::string& name, long* pid) {
  if (name.size() < 2 || name[0] != '.') return false;
  std::string digits;
  const std::string suffix = verify::kTempSuffix;  // temp_path_beside: .NAME.PID<suffix>
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string stem = name.substr(0, name.size() - suffix.size());
    const auto dot = stem.rfind('.');
    if (dot == std::string::npos || dot == 0) return false;
    digits = stem.substr(dot + 1);
  } else {
    const auto tmp = name.rfind(".tmp-");
    if (tmp == std::string::npos || tmp == 0) return false;
    digits = name.substr(tmp + 5);
  }
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *pid = std::stol(digits);
  return true;
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir, const DirLock& lock,
                                                  std::ostream& out) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    long pid = 0;
    if (!parse_temporary_name(item.path().filename().string(), &pid)) continue;
    if (!item.is_regular_file(ec)) continue;
    const bool running = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
    // file_time_type -> system_clock: both count from now on this machine.
    const auto age = fs::file_time_type::clock::now() - item.last_write_time(ec);
    const bool before_lock = !ec && std::chrono::system_clock::now() - age < lock.acquired_at();
    if (running && !before_lock) continue;
    if (fs::remove(item.path(), ec)) {
      out << "removed   stale temporary " << item.path().string() << " ("
          << (running ? "left before this regen took the lock"
                      : "PID " + std::to_string(pid) + " no longer runs")
          << ")\n";
      removed.push_back(item.path().string());
    }
  }
  return removed;
}

}  // namespace pagecheck::verify::golden
