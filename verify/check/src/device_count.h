#pragma once
/// The visible CUDA device count (internal to the worker side, not installed).

namespace pagecheck::verify::check::detail {

/// cudaGetDeviceCount, or 0 when CUDA reports an error (no driver, no device) or the build has
/// no CUDA.
int visible_cuda_devices();

}  // namespace pagecheck::verify::check::detail
