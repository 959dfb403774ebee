#pragma once
/// Launches one variant through VariantInfo's wrappers (can_implement, workspace_bytes, launch
/// with the current device's pc_device_info) on a fresh stream, times it with CUDA events,
/// synchronizes and classifies the outcome.
#include "pagecheck/registry.h"
#include "pagecheck/verify/device_runner.h"

namespace pagecheck::verify::detail {

/// Throws std::runtime_error with device_available()'s reason when no device can be used.
void require_device();

/// Throws std::invalid_argument when `variant` is not of `family`.
void require_family(const VariantInfo& variant, pc_family family);

/// Runs `variant` on `args` (the family's version-2 args struct). The workspace is 256-byte aligned
/// and poisoned (0xFF bytes: NaN in every dtype). Fills disposition, message, elapsed_ms and
/// sticky_error; guards are the caller's.
DeviceRunOutcome launch_variant(const VariantInfo& variant, const void* args);

/// True when the outcome left the context usable (buffers may be read back).
inline bool context_usable(const DeviceRunOutcome& outcome) {
  return !outcome.sticky_error;
}

}  // namespace pagecheck::verify::detail
