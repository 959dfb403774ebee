#pragma once
/// The SVG plot of a report, drawn by tools/plot_bandwidth.py (matplotlib).
#include <string>

namespace pagecheck::bench {

/// Runs `/usr/bin/python3 <repo>/tools/plot_bandwidth.py json_path svg_path` (python3 from PATH
/// when /usr/bin/python3 is missing). Returns true when the SVG was written; otherwise false,
/// with the reason (exit status and the script's stderr) in *error.
bool plot_report(const std::string& repo, const std::string& json_path, const std::string& svg_path,
                 std::string* error);

}  // namespace pagecheck::bench
