/// verify_goldens_on_device in a build without the GPU runner target (pagecheck_device).
#include <ostream>

#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {

int verify_goldens_on_device(const VariantRegistry& /*registry*/, const std::string& dir,
                             std::ostream& out) {
  (void)list_goldens(dir);  // still reports a bad golden directory as bad input
  out << "no CUDA device: this build has no GPU runner (target pagecheck_device)\n";
  return 3;
}

}  // namespace pagecheck::verify::golden
