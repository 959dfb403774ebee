/// One launch of a variant through the plugin ABI, with timing and sticky-error detection.
#include "device_launch.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "device_buffer.h"
#include "pagecheck/cuda_check.h"

namespace pagecheck::verify::detail {
namespace {

/// RAII stream + event pair; destruction ignores errors (it also runs after a sticky error).
struct StreamAndEvents {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  StreamAndEvents() {
    // A blocking stream: ordered after the uploads and memsets on the legacy default stream.
    PAGECHECK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamDefault));
    PAGECHECK_CUDA_CHECK(cudaEventCreate(&start));
    PAGECHECK_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~StreamAndEvents() {
    if (stop != nullptr) (void)cudaEventDestroy(stop);
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }
  StreamAndEvents(const StreamAndEvents&) = delete;
  StreamAndEvents& operator=(const StreamAndEvents&) = delete;
};

std::string cuda_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

/// Errors after which the context cannot be used again (the process must start over).
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

/// Classifies an error seen after the launch; a follow-up call confirms a broken context.
void record_failure(DeviceRunOutcome& outcome, cudaError_t err, const std::string& where) {
  outcome.disposition = LaunchDisposition::kLaunchFailed;
  outcome.message = where + ": " + cuda_text(err);
  (void)cudaGetLastError();
  const bool broken = is_sticky(err) || cudaDeviceSynchronize() != cudaSuccess;
  if (broken) {
    outcome.sticky_error = true;
    outcome.message += " [sticky: the CUDA context is unusable]";
  }
}

}  // namespace

void require_device() {
  std::string reason;
  if (!device_available(&reason)) {
    throw std::runtime_error("pagecheck device runner: " + reason);
  }
}

void require_family(const VariantInfo& variant, pc_family family) {
  if (variant.variant.family != family) {
    throw std::invalid_argument("variant '" + variant.name + "' is a " +
                                family_name(variant.variant.family) + " variant, not " +
                                family_name(family));
  }
}

DeviceRunOutcome launch_variant(const VariantInfo& info, const void* args) {
  DeviceRunOutcome outcome;

  // A stale error from earlier work must not be blamed on this variant.
  const cudaError_t stale = cudaGetLastError();
  if (stale != cudaSuccess) {
    record_failure(outcome, stale, "CUDA error pending before the launch");
    return outcome;
  }

  const pc_device_info device = current_device_info();
  std::string msg;
  const pc_status check = info.can_implement(device, args, &msg);
  if (check != PC_STATUS_OK) {
    outcome.message = msg;
    if (check == PC_STATUS_UNSUPPORTED) {
      outcome.disposition = LaunchDisposition::kNotSupported;
    } else if (check == PC_STATUS_INVALID_ARGUMENT) {
      outcome.disposition = LaunchDisposition::kInvalid;
    } else {
      outcome.disposition = LaunchDisposition::kLaunchFailed;
      outcome.message = "can_implement: " + outcome.message;
    }
    return outcome;
  }

  const std::size_t ws_bytes = info.workspace_bytes(device, args);
  DeviceBuffer workspace;
  if (ws_bytes > 0) {
    workspace = DeviceBuffer(ws_bytes);  // cudaMalloc: 256-byte aligned
    workspace.fill(0xFF, ws_bytes);      // NaN poison: unwritten workspace reads show up
  }

  StreamAndEvents se;
  // Uploads and poison fills must be complete (and error-free) before the kernel starts.
  const cudaError_t setup = cudaDeviceSynchronize();
  if (setup != cudaSuccess) {
    record_failure(outcome, setup, "setup before the launch (cudaDeviceSynchronize)");
    return outcome;
  }
  PAGECHECK_CUDA_CHECK(cudaEventRecord(se.start, se.stream));
  const pc_status st = info.launch(device, args, workspace.get(), se.stream, &msg);
  if (st != PC_STATUS_OK) {
    outcome.disposition = st == PC_STATUS_UNSUPPORTED        ? LaunchDisposition::kNotSupported
                          : st == PC_STATUS_INVALID_ARGUMENT ? LaunchDisposition::kInvalid
                                                             : LaunchDisposition::kLaunchFailed;
    outcome.message = std::string("launch: ") + msg;
    const cudaError_t err = cudaStreamSynchronize(se.stream);
    if (err != cudaSuccess)
      record_failure(outcome, err, outcome.message + "; cudaStreamSynchronize");
    return outcome;
  }
  cudaError_t err = cudaEventRecord(se.stop, se.stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(se.stream);
  if (err != cudaSuccess) {
    record_failure(outcome, err, "kernel execution (cudaStreamSynchronize)");
    return outcome;
  }
  err = cudaGetLastError();
  if (err != cudaSuccess) {
    record_failure(outcome, err, "launch returned OK but the CUDA error state is set");
    return outcome;
  }
  float ms = 0.f;
  PAGECHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, se.start, se.stop));
  outcome.elapsed_ms = ms;
  outcome.disposition = LaunchDisposition::kLaunched;
  return outcome;
}

}  // namespace pagecheck::verify::detail
