/// Device runner of a build without CUDA: no device, every run throws.
#include <stdexcept>
#include <string>

#include "pagecheck/verify/device_runner.h"

namespace pagecheck::verify {
namespace {
constexpr const char* kNoCuda = "this build has no CUDA support";
[[noreturn]] void no_cuda() {
  throw std::runtime_error(std::string("pagecheck device runner: ") + kNoCuda);
}
}  // namespace

bool device_available(std::string* reason) {
  if (reason != nullptr) *reason = kNoCuda;
  return false;
}
void select_device(int) {
  no_cuda();
}
std::string device_description() {
  return {};
}
pc_device_info current_device_info() {
  no_cuda();
}
AttentionRun run_paged_attention(const VariantInfo&, const ref::PagedAttentionProblem&,
                                 const DeviceRunOptions&) {
  no_cuda();
}
CopyRun run_gather_cached_kv(const VariantInfo&, const ref::CacheCopyProblem&,
                             const DeviceRunOptions&) {
  no_cuda();
}
CopyRun run_reshape_and_cache(const VariantInfo&, const ref::CacheCopyProblem&,
                              const DeviceRunOptions&) {
  no_cuda();
}

}  // namespace pagecheck::verify
