#pragma once
/// Checked CUDA calls: failures become pagecheck::CudaError with file, line and call text.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace pagecheck {

/// A failed CUDA call or launch.
struct CudaError : std::runtime_error {
  cudaError_t code;  ///< the CUDA error
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

/// Throws CudaError for `err` (clearing a non-sticky error first).
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  throw CudaError(err, std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace pagecheck

/// Evaluates a CUDA runtime call and throws pagecheck::CudaError when it fails.
#define PAGECHECK_CUDA_CHECK(call)                                          \
  do {                                                                      \
    cudaError_t pagecheck_err_ = (call);                                    \
    if (pagecheck_err_ != cudaSuccess)                                      \
      ::pagecheck::throw_cuda_error(pagecheck_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// Checks the last kernel launch (configuration errors) without synchronizing.
#define PAGECHECK_CUDA_CHECK_LAUNCH() PAGECHECK_CUDA_CHECK(cudaGetLastError())
