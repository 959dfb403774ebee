#pragma once
/// Runs a piece of a golden test in a forked child process: for concurrent regens (separate
/// processes, as two users would run them), resource limits (a full disk) and dropped
/// privileges (a read-only directory), without touching the test process itself.
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

namespace pagecheck::verify::golden::testing {

/// How a child ended and what it printed.
struct ChildResult {
  int status = -1;     ///< exit status; -N when killed by signal N
  std::string output;  ///< what the body wrote to its `log`, then the error message if any
};

/// A started child; wait() collects it.
class Child {
 public:
  /// Forks; the child runs `body(log)`, maps exceptions the way the CLI does
  /// (std::invalid_argument: 2, other: 3, message appended to the log), shuts HDF5 down
  /// (H5close, as exit would) and leaves with _exit, so the test's static objects (the pristine
  /// golden directory) are not destroyed in the child.
  explicit Child(const std::function<int(std::string& log)>& body) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      close(fds[0]);
      std::string log;
      int code = 0;
      try {
        code = body(log);
      } catch (const std::invalid_argument& e) {
        log += std::string("error: ") + e.what() + "\n";
        code = 2;
      } catch (const std::exception& e) {
        log += std::string("internal error: ") + e.what() + "\n";
        code = 3;
      }
      for (std::size_t done = 0; done < log.size();) {
        const ssize_t n = write(fds[1], log.data() + done, log.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      close(fds[1]);
      H5close();  // HDF5's shutdown, where a file left open after a write error crashed
      _exit(code);
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) (void)wait();
  }

  /// Waits for the child and returns how it ended.
  ChildResult wait() {
    ChildResult r;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = read(fd_, buffer, sizeof buffer)) > 0) r.output.append(buffer, n);
    close(fd_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return r;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

/// Runs `body` in a child and waits for it.
inline ChildResult run_in_child(const std::function<int(std::string& log)>& body) {
  Child child(body);
  return child.wait();
}

}  // namespace pagecheck::verify::golden::testing
