/// Device discovery and selection, and the pc_device_info variants see.
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "pagecheck/cuda_check.h"
#include "pagecheck/cuda_device_info.h"
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

pc_device_info current_device_info() {
  static std::mutex mutex;
  static std::map<int, pc_device_info> known;  // filled once per device
  int device = 0;
  PAGECHECK_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = known.find(device);
  if (it != known.end()) return it->second;
  const pc_device_info info = query_device_info(device);
  known.emplace(device, info);
  return info;
}

}  // namespace pagecheck::verify
