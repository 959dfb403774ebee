#pragma once
/// JUnit XML for CI systems: one <testsuite> with one <testcase> per verified variant (or per
/// self-checked family without a GPU); a failing one carries the shrunk counterexample and the
/// reproduce line in its <failure> text. Written with libxml2's text writer (escaping), with
/// characters XML 1.0 cannot hold replaced.
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/verify/check/report.h"

namespace pagecheck::verify::check {

/// One <testcase>.
struct JUnitCase {
  std::string classname;  ///< e.g. "pagecheck.verify.paged_attention"
  std::string name;       ///< e.g. "v1_baseline"
  double seconds = 0;     ///< time attribute
  /// Kind of a problem: "failure" (a check failed) or "error" (the harness failed); empty: ok.
  std::string problem;
  std::string message;  ///< one-line message attribute of the <failure>/<error>
  std::string text;     ///< body of the <failure>/<error> (counterexample, reproduce line)
};

/// The test cases of a verification report: one per variant; a counterexample, failed cases
/// or refusals are a <failure>, harness errors alone an <error>.
std::vector<JUnitCase> junit_cases(const RunReport& report);

/// The whole XML document of suite `suite` (UTF-8, with declaration).
std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases,
                      double seconds);

/// Writes junit_xml to `path` (verify::write_file_atomically); std::runtime_error names the path.
void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<JUnitCase>& cases, double seconds);

}  // namespace pagecheck::verify::check
