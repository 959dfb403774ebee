/// Calls the plotting script (see plot.h).
#include "pagecheck/bench/plot.h"

#include <unistd.h>

#include <filesystem>

#include "pagecheck/bench/process.h"

namespace pagecheck::bench {

bool plot_report(const std::string& repo, const std::string& json_path, const std::string& svg_path,
                 std::string* error) {
  const std::string script = (std::filesystem::path(repo) / "tools" / "plot_bandwidth.py").string();
  const std::string python =
      ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const ProcessResult p = run_process({python, script, json_path, svg_path});
  if (p.exit_code == 0) return true;
  if (error != nullptr) {
    *error = python + " " + script + " exited " + std::to_string(p.exit_code) + ": " + p.err;
  }
  return false;
}

}  // namespace pagecheck::bench
