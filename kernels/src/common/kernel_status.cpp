/// KernelStatus helpers.
#include "common/kernel_status.h"

#include <algorithm>
#include <cstring>

namespace pagecheck::kernels {

KernelStatus KernelStatus::cuda(cudaError_t err, const char* what, const char* file, int line) {
  // A launch-configuration error is not sticky; reading it clears it. A sticky error stays.
  (void)cudaGetLastError();
  return {PC_STATUS_CUDA_ERROR, std::string(file) + ":" + std::to_string(line) + ": " + what +
                                    " failed: " + cudaGetErrorName(err) + " (" +
                                    cudaGetErrorString(err) + ")"};
}

pc_status report(const KernelStatus& status, char* msg, std::size_t msg_len) {
  if (msg != nullptr && msg_len > 0) {
    const std::size_t n = std::min(status.message.size(), msg_len - 1);
    std::memcpy(msg, status.message.data(), n);
    msg[n] = '\0';
  }
  return status.code;
}

}  // namespace pagecheck::kernels
