/// Builds without CUDA have no planted kernels.
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"

namespace pagecheck::verify {
bool planted_variants_available() {
  return false;
}
void register_planted_variants(VariantRegistry&) {}
}  // namespace pagecheck::verify
