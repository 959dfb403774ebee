#pragma once
/// The pc_device_info of a CUDA device (pagecheck/plugin.h), from cudaGetDeviceProperties: what
/// the host hands every can_implement / workspace_bytes / launch. For host code built with
/// CUDA (the device runner, the bench); callers keep the result per device (the query takes
/// milliseconds).
#include <cuda_runtime_api.h>

#include "pagecheck/cuda_check.h"
#include "pagecheck/plugin.h"

namespace pagecheck {

/// Properties of CUDA device `device`; throws CudaError when the query fails.
inline pc_device_info query_device_info(int device) {
  cudaDeviceProp prop{};
  PAGECHECK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  pc_device_info info{};
  info.struct_size = sizeof info;
  info.device = device;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.max_shared_per_block = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  info.l2_bytes = prop.l2CacheSize;
  return info;
}

}  // namespace pagecheck
