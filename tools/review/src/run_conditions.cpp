/// Detection of a compute-sanitizer run (see run_conditions.h).
#include "pagecheck/review/run_conditions.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pagecheck/review/git.h"

namespace pagecheck::review {

namespace {

/// argv of process `pid` from /proc (empty when unreadable).
std::vector<std::string> cmdline_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

/// Parent of process `pid` from /proc/<pid>/stat (0 when unknown).
long parent_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 1));
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

/// The value of option `name` in `argv` ("--name V" or "--name=V"), or nullopt.
std::optional<std::string> option_value(const std::vector<std::string>& argv,
                                        const std::string& name) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == name && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(name + "=", 0) == 0) return argv[i].substr(name.size() + 1);
  }
  return std::nullopt;
}

}  // namespace

SanitizerRun sanitizer_from(const std::optional<std::string>& injection_env,
                            const std::vector<std::vector<std::string>>& ancestors) {
  SanitizerRun run;
  if (!injection_env || injection_env->empty()) return run;
  for (const auto& argv : ancestors) {
    if (argv.empty()) continue;
    if (std::filesystem::path(argv[0]).filename() != "compute-sanitizer") continue;
    const auto targets = option_value(argv, "--target-processes");
    if (targets && *targets != "all") return run;  // the workers were not tracked
    run.ran = true;
    run.tools = {option_value(argv, "--tool").value_or("memcheck")};
    return run;
  }
  return run;  // the variable without a compute-sanitizer ancestor: not a sanitizer run
}

bool record_dirty(const std::string& repo) {
  return !git_head(repo) || git_dirty(repo);
}

SanitizerRun detect_sanitizer() {
  const char* env = std::getenv(kSanitizerEnv);
  std::vector<std::vector<std::string>> ancestors;
  for (long pid = getppid(); pid > 1 && ancestors.size() < 16; pid = parent_of(pid)) {
    ancestors.push_back(cmdline_of(pid));
  }
  return sanitizer_from(env ? std::optional<std::string>(env) : std::nullopt, ancestors);
}

}  // namespace pagecheck::review
