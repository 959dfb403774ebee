/// run_bench without CUDA in the build: every entry point says so.
#include "pagecheck/bench/runner.h"

#include <stdexcept>

namespace pagecheck::bench {

namespace {
constexpr const char* kNoCuda =
    "this pagecheck was built without CUDA (PAGECHECK_ENABLE_CUDA=OFF "
    "or nvcc not found); pagecheck bench needs a CUDA build and a GPU";
}

bool bench_device_available(std::string* reason) {
  if (reason != nullptr) *reason = kNoCuda;
  return false;
}

Environment query_environment(int) {
  throw std::runtime_error(kNoCuda);
}

BenchReport run_bench(const VariantRegistry&, pc_family, const std::vector<std::string>&,
                      const std::vector<BenchShape>&, const BenchOptions&, std::ostream*) {
  throw std::runtime_error(kNoCuda);
}

}  // namespace pagecheck::bench
