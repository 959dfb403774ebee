/// Child processes through posix_spawnp (no shell, binary-safe output).
#include "pagecheck/bench/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

extern char** environ;

namespace pagecheck::bench {

namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return out;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv_in) {
  ProcessResult result;
  if (argv_in.empty()) return result;
  std::vector<std::string> argv_s = argv_in;
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  if (::pipe(out_pipe) != 0) return result;
  char err_name[] = "/tmp/pagecheck-proc-XXXXXX";
  const int err_fd = ::mkstemp(err_name);
  if (err_fd < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return result;
  }
  ::unlink(err_name);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv_s[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_fd);
    result.err = "cannot run " + argv_s[0];
    return result;
  }
  result.out = read_all(out_pipe[0]);
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::lseek(err_fd, 0, SEEK_SET);
  result.err = read_all(err_fd);
  ::close(err_fd);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

const char* tool_version() {
  return "pagecheck " PAGECHECK_VERSION_STRING;
}

}  // namespace pagecheck::bench
