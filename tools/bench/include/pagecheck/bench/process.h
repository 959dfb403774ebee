#pragma once
/// Runs a helper program (git, the plotting script) without a shell and captures its output.
#include <string>
#include <vector>

namespace pagecheck::bench {

/// Exit status and output of a finished process.
struct ProcessResult {
  int exit_code = -1;  ///< exit status; -1 when it could not be started or was killed
  std::string out;     ///< stdout, byte for byte
  std::string err;     ///< stderr
};

/// Runs argv[0] (looked up in PATH) with the arguments in `argv`; never throws for a failing
/// program (see exit_code).
ProcessResult run_process(const std::vector<std::string>& argv);

/// "pagecheck <version>" of this build.
const char* tool_version();

}  // namespace pagecheck::bench
