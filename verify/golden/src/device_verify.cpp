/// Every kernel variant against every golden, on the GPU: the real run functions bound into
/// verify_goldens_with (device_verify_core.cpp holds the device-independent logic).
#include <ostream>

#include "pagecheck/registry.h"
#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {

GoldenRunner device_golden_runner() {
  GoldenRunner runner;
  runner.paged_attention = [](const VariantInfo& v, const ref::PagedAttentionProblem& p) {
    return run_paged_attention(v, p);
  };
  runner.gather_cached_kv = [](const VariantInfo& v, const ref::CacheCopyProblem& p) {
    return run_gather_cached_kv(v, p);
  };
  runner.reshape_and_cache = [](const VariantInfo& v, const ref::CacheCopyProblem& p) {
    return run_reshape_and_cache(v, p);
  };
  return runner;
}

int verify_goldens_on_device(const VariantRegistry& registry, const std::string& dir,
                             std::ostream& out) {
  std::string reason;
  if (!device_available(&reason)) {
    (void)list_goldens(dir);  // still reports a bad golden directory as bad input
    out << "no CUDA device: " << reason << "\n";
    return 3;
  }
  out << "device " << device_description() << "\n";
  return verify_goldens_with(registry, dir, device_golden_runner(), out);
}

}  // namespace pagecheck::verify::golden
