#pragma once
/// Status of a host-side check or a kernel launch, convertible to the plugin ABI's pc_status
/// plus message. Launch helpers never synchronize: they report configuration errors only.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// A pc_status with its human-readable reason.
struct KernelStatus {
  pc_status code = PC_STATUS_OK;  ///< PC_STATUS_OK or the failure class
  std::string message;            ///< empty when ok

  bool ok() const { return code == PC_STATUS_OK; }
  static KernelStatus success() { return {}; }
  /// A valid problem the variant does not handle (unsupported head size, misaligned stride).
  static KernelStatus unsupported(std::string why) {
    return {PC_STATUS_UNSUPPORTED, std::move(why)};
  }
  /// Inconsistent arguments.
  static KernelStatus invalid(std::string why) {
    return {PC_STATUS_INVALID_ARGUMENT, std::move(why)};
  }
  /// A failed CUDA call: "file:line: what failed: cudaErrorX (text)".
  static KernelStatus cuda(cudaError_t err, const char* what, const char* file, int line);
};

/// Copies status.message into msg (NUL-terminated, truncated to msg_len) and returns the code.
pc_status report(const KernelStatus& status, char* msg, std::size_t msg_len);

}  // namespace pagecheck::kernels

/// Returns KernelStatus::cuda(...) from the enclosing function when the last launch failed
/// (cudaGetLastError; does not synchronize).
#define PAGECHECK_RETURN_IF_LAUNCH_FAILED(what)                                              \
  do {                                                                                       \
    const cudaError_t pagecheck_launch_err_ = cudaGetLastError();                            \
    if (pagecheck_launch_err_ != cudaSuccess)                                                \
      return ::pagecheck::kernels::KernelStatus::cuda(pagecheck_launch_err_, what, __FILE__, \
                                                      __LINE__);                             \
  } while (0)

/// Returns KernelStatus::cuda(...) from the enclosing function when a CUDA runtime call fails.
#define PAGECHECK_RETURN_IF_CUDA_FAILED(call)                                               \
  do {                                                                                      \
    const cudaError_t pagecheck_call_err_ = (call);                                         \
    if (pagecheck_call_err_ != cudaSuccess)                                                 \
      return ::pagecheck::kernels::KernelStatus::cuda(pagecheck_call_err_, #call, __FILE__, \
                                                      __LINE__);                            \
  } while (0)
