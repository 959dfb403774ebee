#pragma once
/// Shared helpers of the GPU tests: the built-in registry, the no-device skip, decoding and
/// byte comparison.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "pagecheck/reference/dtype.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::gpu_test {

/// A registry holding the built-in variants (empty in a build without CUDA).
const VariantRegistry& builtin_registry();

/// Empty when `actual` equals `expected` byte for byte, else "N of M elements differ, first at
/// element I: expected 0x.. got 0x..".
std::string byte_difference(const std::vector<std::byte>& expected,
                            const std::vector<std::byte>& actual, std::size_t elem_bytes);

/// Names of the disposition values.
const char* disposition_name(verify::LaunchDisposition d);

/// The tolerance model of `variant`: its declared precision (pc_variant.precision), the
/// default constants.
verify::ToleranceModel tolerance_model(const VariantInfo& variant);

}  // namespace pagecheck::gpu_test

/// Skips the current test when no CUDA device can be used (or the build has no CUDA).
#define PAGECHECK_SKIP_WITHOUT_DEVICE()                               \
  do {                                                                \
    std::string pagecheck_reason_;                                    \
    if (!::pagecheck::verify::device_available(&pagecheck_reason_)) { \
      GTEST_SKIP() << "no CUDA device: " << pagecheck_reason_;        \
    }                                                                 \
  } while (0)
