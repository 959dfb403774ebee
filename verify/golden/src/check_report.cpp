/// `pagecheck golden check --json`: the verdicts of check_goldens as JSON.
#include <nlohmann/json.hpp>

#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {

std::string check_report_json(const CheckReport& report, const std::string& source) {
  nlohmann::json doc;
  doc["schema"] = "pagecheck.golden_check/1";
  doc["dir"] = report.dir;
  doc["source"] = source;
  doc["exit_code"] = report.exit_code();
  int ok = 0;
  nlohmann::json cases = nlohmann::json::array();
  for (const CheckedCase& c : report.cases) {
    ok += c.status == "ok" ? 1 : 0;
    cases.push_back(
        {{"name", c.name}, {"file", c.file}, {"status", c.status}, {"messages", c.messages}});
  }
  doc["counts"] = {{"listed", report.cases.size()},
                   {"ok", ok},
                   {"failed", report.failed},
                   {"bad", report.bad + (report.manifest_bad ? 1 : 0)}};
  doc["problems"] = report.problems;
  doc["cases"] = std::move(cases);
  return doc.dump(2) + "\n";
}

}  // namespace pagecheck::verify::golden
