#pragma once
/// Several GPUs in one run (`pagecheck verify --devices all|0,1,…`): which devices a run uses,
/// how its executors map onto them, and the per-device counts a report keeps. Cases do not
/// depend on the device that runs them, so a multi-device run's merged counts equal a
/// one-device run's of the same seed; the per-device counts show a GPU that faults or is slow.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/verify/check/case_result.h"

namespace pagecheck::verify::check {

/// One GPU of a run.
struct DeviceSlot {
  int index = 0;            ///< CUDA device index (as the workers see it)
  std::string description;  ///< "NVIDIA H200 (sm_90, 132 SMs)" or similar
};

/// What one GPU did in a run (cases of the run proper; shrink steps are not counted).
struct DeviceReport {
  int index = 0;              ///< CUDA device index
  std::string description;    ///< the device's description
  int64_t cases = 0;          ///< cases it ran
  int64_t passed = 0;         ///< of them passed
  int64_t failed = 0;         ///< kernel failures (faults and crashes included)
  int64_t faults = 0;         ///< of the failures: fault, launch_failed, crashed or timeout
  int64_t not_supported = 0;  ///< refused by the variant
  int64_t errors = 0;         ///< harness errors
  double seconds = 0;         ///< sum of its case times

  /// Counts `r`, a case this device ran.
  void add(const CaseResult& r);
  /// Adds another report of the same device (merging shards).
  void add(const DeviceReport& other);
};

/// The devices `--devices` names: "all" (0 .. device_count-1) or a comma-separated list of
/// distinct indices below device_count. Throws std::invalid_argument naming the text and the
/// problem (no device at all, an index out of range, a repeated index, a malformed list).
std::vector<int> parse_device_list(std::string_view text, int device_count);

/// The slot (index into the run's device list) of executor `executor` when `devices` devices
/// share the executors round robin: executor w runs on device w mod devices.
inline std::size_t device_slot_of(int executor, std::size_t devices) {
  return devices == 0 ? 0 : static_cast<std::size_t>(executor) % devices;
}

void to_json(nlohmann::json& j, const DeviceReport& d);
void from_json(const nlohmann::json& j, DeviceReport& d);

}  // namespace pagecheck::verify::check
