#pragma once
/// The built-in kernel variants as plugin-ABI descriptors (what pagecheck_builtin_register
/// hands to the host, exactly as an external plugin would).
#include <cstddef>

#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// Every built-in variant, in registration order; `*count` receives the number.
const pc_variant* builtin_variants(std::size_t* count);

}  // namespace pagecheck::kernels
