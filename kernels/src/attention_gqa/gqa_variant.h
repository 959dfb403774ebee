#pragma once
/// The C-ABI declaration of v3_gqa (registered from kVariants in builtin_variants.cpp).
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// v3_gqa's pc_variant: what it supports (dtypes, fp8 KV, layouts, scales, features, head and
/// block sizes, q_len <= 16, partition sizes, strict float32 precision, context 0 -> zeros) and
/// its can_implement / workspace_bytes / launch trampolines.
pc_variant gqa_variant();

}  // namespace pagecheck::kernels
