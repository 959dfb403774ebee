/// Worker sessions on several GPUs (see DeviceSessions in device_worker.h).
#include <stdexcept>

#include "pagecheck/verify/check/device_worker.h"

namespace pagecheck::verify::check {

DeviceSessions::DeviceSessions(const std::string& exe, WorkerOptions options,
                               const std::vector<int>& devices, double timeout_s) {
  for (int index : devices) {
    options.device = index;
    const std::string name = "device " + std::to_string(index);
    try {
      auto session = std::make_unique<WorkerSession>(exe, options, timeout_s);
      if (!session->gpu_available() && !options.simulate) {
        dropped_.push_back(name + " left out: " + session->reason());
        continue;
      }
      slots_.push_back(DeviceSlot{index, session->device()});
      sessions_.push_back(std::move(session));
    } catch (const std::runtime_error& e) {  // the worker did not start or answer
      dropped_.push_back(name + " left out: " + e.what());
    }
  }
}

WorkerSession& DeviceSessions::first() {
  if (sessions_.empty()) throw std::logic_error("DeviceSessions::first: no usable device");
  return *sessions_.front();
}

ExecutorFactory DeviceSessions::factory() {
  std::vector<ExecutorFactory> per_device;
  for (auto& s : sessions_) per_device.push_back(s->factory());
  return [per_device](int worker) -> std::unique_ptr<CaseExecutor> {
    const std::size_t slot = device_slot_of(worker, per_device.size());
    // The device's own executor number: 0 for its first executor (its hello worker).
    return per_device[slot](worker / static_cast<int>(per_device.size()));
  };
}

}  // namespace pagecheck::verify::check
