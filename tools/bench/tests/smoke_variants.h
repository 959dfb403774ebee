#pragma once
/// Two gather variants owned by the GPU smoke test, so the bench harness is exercised even
/// without the built-in kernels: a correct element-wise gather (16-bit dtypes) and a broken one
/// that writes nothing (the bench's output check must mark it failed).
#include "pagecheck/plugin.h"

namespace pagecheck::bench::testing {

/// "smoke_gather": a plain, correct gather_cached_kv for float16/bfloat16.
pc_variant smoke_gather_variant();
/// "smoke_lazy": launches nothing and reports success.
pc_variant smoke_lazy_variant();

}  // namespace pagecheck::bench::testing
