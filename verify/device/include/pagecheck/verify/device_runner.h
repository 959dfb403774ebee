#pragma once
/// Runs one registered kernel variant on one host problem on the GPU: uploads the inputs,
/// poisons the outputs (NaN) inside guard zones, converts the problem to the plugin ABI v2
/// arguments (pagecheck/verify/abi_args.h), launches through VariantInfo's wrappers,
/// synchronizes, checks the guards and downloads the results. Without CUDA in the build, or
/// without a device, device_available() is false and the run functions throw.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/registry.h"

namespace pagecheck::verify {

/// True when a CUDA device can be used; otherwise `reason` (if given) says why, e.g. "no CUDA
/// device found (cudaErrorNoDevice)" or "this build has no CUDA support".
bool device_available(std::string* reason = nullptr);
/// Makes device `index` current for the calling thread; throws std::invalid_argument when out
/// of range.
void select_device(int index);
/// "NVIDIA H200 (sm_90, 132 SMs)" or similar; empty without a device.
std::string device_description();
/// The current device as variants see it (pc_device_info, from cudaGetDeviceProperties, read
/// once per device and process). Throws pagecheck::CudaError (std::runtime_error) without a
/// device.
pc_device_info current_device_info();

/// How a run ended on the device side (the comparison with the reference is the caller's).
enum class LaunchDisposition {
  kLaunched,      ///< can_implement and launch returned OK and the stream synchronized cleanly
  kNotSupported,  ///< the variant refused the problem (PC_STATUS_UNSUPPORTED)
  kInvalid,       ///< the variant called the arguments invalid (PC_STATUS_INVALID_ARGUMENT)
  kLaunchFailed,  ///< launch returned an error or the CUDA error state is set (message says)
};

/// Device-side outcome of one run.
struct DeviceRunOutcome {
  LaunchDisposition disposition = LaunchDisposition::kLaunchFailed;  ///< see above
  std::string message;        ///< variant or CUDA message; empty when launched cleanly
  bool guards_intact = true;  ///< every guard byte before/after every output unchanged
  std::string guard_report;   ///< "key_out: 16 bytes changed after the end, first at +0"
  double elapsed_ms = 0;      ///< launch-to-sync wall time of the kernel (CUDA events)
  bool sticky_error = false;  ///< the context is unusable (e.g. illegal address)
};

/// Options shared by all runs.
struct DeviceRunOptions {
  int64_t guard_bytes = 4096;  ///< canary bytes before and after every output buffer
  /// Layout of the attention output on the device (default: packed [num_query_tokens,
  /// num_heads, head_size]). Lets a run write into a strided buffer; the result is returned
  /// densely packed either way.
  std::optional<ref::TokenLayout> attention_out_layout;
  uint8_t guard_pattern = 0xA5;  ///< value of each guard byte
};

/// Result of a paged-attention run.
struct AttentionRun {
  DeviceRunOutcome outcome;  ///< device-side outcome
  /// raw storage, densely packed [batch.num_query_tokens(), num_heads, head_size]
  std::vector<std::byte> out;
};

/// Result of a copy-kernel run: the whole output buffers, in the problem's own layouts.
struct CopyRun {
  DeviceRunOutcome outcome;       ///< device-side outcome
  std::vector<std::byte> first;   ///< gather: key (key_layout); reshape: key_cache (both halves
                                  ///< of a combined cache)
  std::vector<std::byte> second;  ///< gather: value (value_layout); reshape: value_cache (empty
                                  ///< for a combined cache)
};

/// Runs a paged-attention variant. The output starts as the dtype's output poison (a NaN).
AttentionRun run_paged_attention(const VariantInfo& variant, const ref::PagedAttentionProblem& p,
                                 const DeviceRunOptions& options = {});
/// Runs a gather variant. The outputs start as problem.key / problem.value (callers poison
/// them), so that rows with slot -1 can be checked to stay untouched.
CopyRun run_gather_cached_kv(const VariantInfo& variant, const ref::CacheCopyProblem& p,
                             const DeviceRunOptions& options = {});
/// Runs a reshape_and_cache variant. The caches start as problem.key_cache / value_cache.
CopyRun run_reshape_and_cache(const VariantInfo& variant, const ref::CacheCopyProblem& p,
                              const DeviceRunOptions& options = {});

}  // namespace pagecheck::verify
