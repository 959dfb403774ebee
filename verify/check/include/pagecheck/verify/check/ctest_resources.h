#pragma once
/// CTest resource allocation for the GPU test binaries (issue 19): with
/// `ctest -j N --resource-spec-file gpus.json` CTest gives each test that declares
/// RESOURCE_GROUPS "gpus:1" one GPU and says which in CTEST_RESOURCE_GROUP_0_GPUS
/// ("id:1,slots:1"); the binary then narrows CUDA_VISIBLE_DEVICES to it, so its device 0 (and
/// its worker processes') is that GPU. Without a spec file CTest sets nothing and the tests use
/// device 0 as before.
#include <functional>
#include <optional>
#include <string>

namespace pagecheck::verify::check {

/// Looks up an environment variable (nullptr when unset); std::getenv by default.
using EnvLookup = std::function<const char*(const char*)>;

/// The GPU id CTest allocated to this test: the id of CTEST_RESOURCE_GROUP_0_GPUS when
/// CTEST_RESOURCE_GROUP_COUNT is set, nullopt when CTest allocated nothing. Throws
/// std::invalid_argument naming the variable when the values are malformed (no gpus group,
/// no "id:" field, an id that is not a non-negative integer).
std::optional<std::string> ctest_allocated_gpu(const EnvLookup& env);

/// The CUDA_VISIBLE_DEVICES value that makes `gpu` (an index into the devices visible now)
/// device 0: `gpu` itself when `visible` is unset or empty, else the gpu-th entry of `visible`
/// ("2,3" and gpu 1 give "3"). Throws std::invalid_argument when `visible` has no such entry.
std::string visible_devices_for(const std::string& gpu, const char* visible);

}  // namespace pagecheck::verify::check
