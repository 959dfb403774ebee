/// Device and software description for the report: CUDA attributes plus nvidia-smi's driver
/// version and current clocks when nvidia-smi is installed.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pagecheck/bench/runner.h"
#include "pagecheck/cuda_check.h"

namespace pagecheck::bench {

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// "bus:device.function" of a PCI id, lowercase: nvidia-smi pads the domain to 8 digits,
/// CUDA to 4.
std::string bus_part(const std::string& id) {
  const auto colon = id.find(':');
  return lower(colon == std::string::npos ? id : id.substr(colon + 1));
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int64_t to_int(const std::string& s) {
  try {
    return static_cast<int64_t>(std::stod(s));
  } catch (...) {
    return 0;
  }
}

/// Fills driver version and clocks from nvidia-smi for the GPU at `pci`; false when
/// nvidia-smi is missing or does not list it.
bool query_nvidia_smi(const std::string& pci, Environment& e) {
  const char* cmd =
      "nvidia-smi --query-gpu=pci.bus_id,driver_version,clocks.sm,clocks.mem,clocks.max.sm,"
      "clocks.max.mem --format=csv,noheader,nounits 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd, "r"), pclose);
  if (!pipe) return false;
  char line[512];
  while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string f;
    while (std::getline(in, f, ',')) fields.push_back(trim(f));
    if (fields.size() != 6 || bus_part(fields[0]) != bus_part(pci)) continue;
    e.driver_version = fields[1];
    e.sm_clock_mhz = to_int(fields[2]);
    e.mem_clock_mhz = to_int(fields[3]);
    e.max_sm_clock_mhz = to_int(fields[4]);
    e.max_mem_clock_mhz = to_int(fields[5]);
    e.clock_source = "nvidia-smi";
    return true;
  }
  return false;
}

}  // namespace

bool bench_device_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    if (reason != nullptr) {
      *reason = err != cudaSuccess
                    ? std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " +
                          cudaGetErrorString(err) + ")"
                    : "no CUDA device found";
    }
    return false;
  }
  return true;
}

Environment query_environment(int device) {
  Environment e;
  cudaDeviceProp prop{};
  PAGECHECK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  e.device = prop.name;
  e.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  e.sm_count = prop.multiProcessorCount;
  e.l2_bytes = prop.l2CacheSize;
  e.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  char pci[64] = {0};
  PAGECHECK_CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof pci, device));
  e.pci_bus_id = pci;
  int driver = 0, runtime = 0;
  PAGECHECK_CUDA_CHECK(cudaDriverGetVersion(&driver));
  PAGECHECK_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  e.cuda_driver_version = version_text(driver);
  e.cuda_runtime_version = version_text(runtime);
  if (!query_nvidia_smi(e.pci_bus_id, e)) {
    int sm_khz = 0, mem_khz = 0;
    PAGECHECK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
    PAGECHECK_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
    e.driver_version = "unknown (nvidia-smi not available)";
    e.max_sm_clock_mhz = sm_khz / 1000;
    e.max_mem_clock_mhz = mem_khz / 1000;
    e.clock_source = "cudaDeviceGetAttribute (peak clocks only; current unknown)";
  }
  return e;
}

}  // namespace pagecheck::bench
