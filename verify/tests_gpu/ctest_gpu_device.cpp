/// Linked into each GPU test binary (issue 19): before main, the GPU CTest allocated
/// (CTEST_RESOURCE_GROUP_0_GPUS, see ctest_resources.h) becomes the only visible CUDA device,
/// so `ctest -j --resource-spec-file` spreads the GPU tests over the GPUs. The CTest variables
/// are then removed, so worker processes the binary starts inherit the narrowed device list
/// without narrowing it again. No CUDA call happens here (CUDA reads CUDA_VISIBLE_DEVICES when
/// it initializes, later).
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "pagecheck/verify/check/ctest_resources.h"

namespace {

[[maybe_unused]] const bool kApplied = [] {
  namespace check = pagecheck::verify::check;
  try {
    const auto gpu = check::ctest_allocated_gpu([](const char* name) { return std::getenv(name); });
    if (!gpu) return false;
    const std::string visible =
        check::visible_devices_for(*gpu, std::getenv("CUDA_VISIBLE_DEVICES"));
    setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
    unsetenv("CTEST_RESOURCE_GROUP_COUNT");
    unsetenv("CTEST_RESOURCE_GROUP_0");
    unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");
    std::fprintf(stderr, "ctest resource allocation: GPU %s (CUDA_VISIBLE_DEVICES=%s)\n",
                 gpu->c_str(), visible.c_str());
    return true;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ctest resource allocation: %s\n", e.what());
    std::exit(2);
  }
}();

}  // namespace
