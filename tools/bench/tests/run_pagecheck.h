#pragma once
/// Runs the pagecheck executable under test, for the tests that go through the command line.
/// The test's CMakeLists defines PAGECHECK_EXE (its path, `$<TARGET_FILE:pagecheck>`).
#include <string>
#include <vector>

#include "pagecheck/bench/process.h"

#ifndef PAGECHECK_EXE
#error "PAGECHECK_EXE (the pagecheck executable under test) must be defined for this test"
#endif

namespace pagecheck::bench::testing {

/// Runs `pagecheck args...`; returns its exit status, stdout and stderr.
inline ProcessResult pagecheck(std::vector<std::string> args) {
  args.insert(args.begin(), PAGECHECK_EXE);
  return run_process(args);
}

}  // namespace pagecheck::bench::testing
