/// CTest's GPU allocation (see ctest_resources.h).
#include "pagecheck/verify/check/ctest_resources.h"

#include <sstream>
#include <stdexcept>
#include <vector>

namespace pagecheck::verify::check {

namespace {

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<std::string> ctest_allocated_gpu(const EnvLookup& env) {
  const char* count = env("CTEST_RESOURCE_GROUP_COUNT");
  if (count == nullptr) return std::nullopt;
  const char* types = env("CTEST_RESOURCE_GROUP_0");
  if (types == nullptr || std::string(types).find("gpus") == std::string::npos) {
    throw std::invalid_argument(
        std::string("CTEST_RESOURCE_GROUP_COUNT is ") + count +
        " but CTEST_RESOURCE_GROUP_0 names no 'gpus' (the test's RESOURCE_GROUPS must be "
        "\"gpus:1\")");
  }
  const char* gpus = env("CTEST_RESOURCE_GROUP_0_GPUS");
  const std::string text = gpus == nullptr ? "" : gpus;
  // "id:<id>,slots:<n>" (several allocations are ';'-separated: the first is the test's).
  const std::string first = text.substr(0, text.find(';'));
  std::string id;
  std::stringstream fields(first);
  for (std::string field; std::getline(fields, field, ',');) {
    if (field.rfind("id:", 0) == 0) id = field.substr(3);
  }
  if (!is_index(id)) {
    throw std::invalid_argument("CTEST_RESOURCE_GROUP_0_GPUS is '" + text +
                                "': expected 'id:<GPU index>,slots:<n>' (the resource spec "
                                "file's gpus ids must be the CUDA indices 0, 1, ...)");
  }
  return id;
}

std::string visible_devices_for(const std::string& gpu, const char* visible) {
  if (visible == nullptr || *visible == '\0') return gpu;
  std::vector<std::string> entries;
  std::stringstream in(visible);
  for (std::string e; std::getline(in, e, ',');) entries.push_back(e);
  const std::size_t index = std::stoul(gpu);
  if (index >= entries.size()) {
    throw std::invalid_argument("CTest allocated GPU " + gpu + ", but CUDA_VISIBLE_DEVICES '" +
                                visible + "' lists " + std::to_string(entries.size()) +
                                " device(s)");
  }
  return entries[index];
}

}  // namespace pagecheck::verify::check
