/// Shared helpers of the GPU tests.
#include "gpu_test_support.h"

#include <cstdio>
#include <cstring>

namespace pagecheck::gpu_test {

const VariantRegistry& builtin_registry() {
  static const VariantRegistry* registry = [] {
    auto* r = new VariantRegistry;
    register_builtin_kernels(*r);
    return r;
  }();
  return *registry;
}

std::string byte_difference(const std::vector<std::byte>& expected,
                            const std::vector<std::byte>& actual, std::size_t elem) {
  if (expected.size() != actual.size()) {
    return "size differs: expected " + std::to_string(expected.size()) + " bytes, got " +
           std::to_string(actual.size());
  }
  if (std::memcmp(expected.data(), actual.data(), expected.size()) == 0) return {};
  const std::size_t n = expected.size() / elem;
  std::size_t differ = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(expected.data() + i * elem, actual.data() + i * elem, elem) != 0) {
      if (differ == 0) first = i;
      ++differ;
    }
  }
  auto hex = [&](const std::vector<std::byte>& v) {
    std::string s = "0x";
    for (std::size_t b = elem; b-- > 0;) {
      char buf[3];
      std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(v[first * elem + b]));
      s += buf;
    }
    return s;
  };
  return std::to_string(differ) + " of " + std::to_string(n) + " elements differ, first at " +
         "element " + std::to_string(first) + ": expected " + hex(expected) + " got " + hex(actual);
}

const char* disposition_name(verify::LaunchDisposition d) {
  switch (d) {
    case verify::LaunchDisposition::kLaunched:
      return "launched";
    case verify::LaunchDisposition::kNotSupported:
      return "not supported";
    case verify::LaunchDisposition::kInvalid:
      return "invalid";
    case verify::LaunchDisposition::kLaunchFailed:
      return "launch failed";
  }
  return "unknown";
}

verify::ToleranceModel tolerance_model(const VariantInfo& variant) {
  verify::ToleranceModel model;
  model.precision = verify::from_abi(variant.variant.precision);
  return model;
}

}  // namespace pagecheck::gpu_test
