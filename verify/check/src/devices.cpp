/// Device lists and per-device counts (see devices.h).
#include "pagecheck/verify/check/devices.h"

#include <algorithm>
#include <stdexcept>

namespace pagecheck::verify::check {

void DeviceReport::add(const CaseResult& r) {
  ++cases;
  seconds += r.total_ms / 1000.0;
  switch (r.outcome) {
    case Outcome::kPassed:
      ++passed;
      break;
    case Outcome::kNotSupported:
      ++not_supported;
      break;
    case Outcome::kError:
      ++errors;
      break;
    case Outcome::kFault:
    case Outcome::kLaunchFailed:
    case Outcome::kCrashed:
    case Outcome::kTimeout:
      ++faults;
      ++failed;
      break;
    default:
      ++failed;
  }
}

void DeviceReport::add(const DeviceReport& o) {
  cases += o.cases;
  passed += o.passed;
  failed += o.failed;
  faults += o.faults;
  not_supported += o.not_supported;
  errors += o.errors;
  seconds += o.seconds;
}

std::vector<int> parse_device_list(std::string_view text, int device_count) {
  const std::string quoted = "--devices '" + std::string(text) + "'";
  if (text == "all") {
    if (device_count <= 0) {
      throw std::invalid_argument(quoted +
                                  ": no CUDA device is visible (cudaGetDeviceCount "
                                  "found 0; check CUDA_VISIBLE_DEVICES and the driver)");
    }
    std::vector<int> all(static_cast<std::size_t>(device_count));
    for (int i = 0; i < device_count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (item.empty() || item.size() > 4 ||
        item.find_first_not_of("0123456789") != std::string_view::npos) {
      throw std::invalid_argument(quoted + ": '" + std::string(item) +
                                  "' is not a device index (give 'all' or indices like 0,1)");
    }
    const int index = std::stoi(std::string(item));
    if (index >= device_count) {
      throw std::invalid_argument(quoted + ": device " + std::to_string(index) +
                                  " is out of range: " + std::to_string(device_count) +
                                  " CUDA device(s) visible");
    }
    if (std::find(out.begin(), out.end(), index) != out.end()) {
      throw std::invalid_argument(quoted + ": device " + std::to_string(index) +
                                  " is listed twice");
    }
    out.push_back(index);
    start = comma + 1;
  }
  return out;
}

void to_json(nlohmann::json& j, const DeviceReport& d) {
  j = nlohmann::json{{"index", d.index},
                     {"description", d.description},
                     {"cases", d.cases},
                     {"passed", d.passed},
                     {"failed", d.failed},
                     {"faults", d.faults},
                     {"not_supported", d.not_supported},
                     {"errors", d.errors},
                     {"seconds", d.seconds}};
}

void from_json(const nlohmann::json& j, DeviceReport& d) {
  d.index = j.at("index").get<int>();
  d.description = j.value("description", std::string());
  d.cases = j.at("cases").get<int64_t>();
  d.passed = j.at("passed").get<int64_t>();
  d.failed = j.at("failed").get<int64_t>();
  d.faults = j.value("faults", int64_t{0});
  d.not_supported = j.value("not_supported", int64_t{0});
  d.errors = j.value("errors", int64_t{0});
  d.seconds = j.value("seconds", 0.0);
}

}  // namespace pagecheck::verify::check
