/// The visible CUDA device count for `verify --devices all` (the worker asks; the parent never
/// calls CUDA). Builds without CUDA see none.
#include "device_count.h"

#if defined(PAGECHECK_CHECK_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace pagecheck::verify::check::detail {

int visible_cuda_devices() {
#if defined(PAGECHECK_CHECK_WITH_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: none visible, not an error here
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

}  // namespace pagecheck::verify::check::detail
