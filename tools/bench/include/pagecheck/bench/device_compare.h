#pragma once
/// The same sweep on several GPUs of a host (`pagecheck bench --devices`): for every shape and
/// variant measured on each device, how far each device's median time is from the devices'
/// common reference (the median over every device that measured it, so one outlier does not
/// drag the alike cards' reference), flagged when the gap exceeds the noise of both sides (the
/// nvbench rule: a change is real only when it is larger than both runs' noise). A slow, throttled
/// or faulty card shows up as the device whose cells are flagged.
#include <string>
#include <vector>

#include "pagecheck/bench/report.h"

namespace pagecheck::bench {

/// One device's result of one (shape, variant) against the other devices.
struct DeviceGap {
  bool compared = false;    ///< measured ("ok") here and on at least one other device
  double reference_us = 0;  ///< median of every measuring device's median time (this one too)
  double others_noise = 0;  ///< largest noise among the other measuring devices
  double gap = 0;           ///< median_us / reference_us - 1 (> 0: slower than the others)
  bool flagged = false;     ///< |gap| > max(this device's noise, others_noise)
};

/// The gaps of every device: gaps[device][shape][variant], in the reports' order of shapes
/// and variants (the first report's; the others must hold the same sweep).
struct DeviceComparison {
  std::vector<std::vector<std::vector<DeviceGap>>> gaps;  ///< [device][shape][variant]
  std::vector<int> flagged;                               ///< per device: its flagged cells
};

/// Compares the reports of one sweep measured on each device (one report per device, same
/// family, shapes and variants in the same order). Throws ReportError naming the device and
/// the difference when the sweeps differ.
DeviceComparison compare_devices(const std::vector<BenchReport>& per_device);

/// One table per device (shape, variant, median, GB/s, noise, and "vs others": the gap, with
/// OUTLIER when flagged), headed by the device's name and index; then a line per device that
/// has flagged cells. `indices` are the CUDA indices of the reports' devices.
std::string render_device_tables(const std::vector<BenchReport>& per_device,
                                 const std::vector<int>& indices,
                                 const DeviceComparison& comparison);

}  // namespace pagecheck::bench
