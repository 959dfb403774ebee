/// Device discovery and selection.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "pagecheck/cuda_check.h"
#include "pagecheck/verify/device_runner.h"

namespace pagecheck::verify {

bool device_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason != nullptr) {
      *reason = std::string("no CUDA device found (") + cudaGetErrorName(err) + ": " +
                cudaGetErrorString(err) + ")";
    }
    return false;
  }
  if (count == 0) {
    if (reason != nullptr) *reason = "no CUDA device found (device count is 0)";
    return false;
  }
  if (reason != nullptr) reason->clear();
  return true;
}

void select_device(int index) {
  int count = 0;
  PAGECHECK_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (index < 0 || index >= count) {
    throw std::invalid_argument("--device " + std::to_string(index) +
                                " is out of range: " + std::to_string(count) + " CUDA device(s)");
  }
  PAGECHECK_CUDA_CHECK(cudaSetDevice(index));
}

std::string device_description() {
  if (!device_available()) return {};
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
}

}  // namespace pagecheck::verify
