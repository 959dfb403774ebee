#pragma once
/// Reference KV-cache copies. When the contiguous dtype equals the cache dtype both are exact
/// element copies (bytes, NaN payloads included); otherwise the cache is fp8 and the copy
/// converts by the rule of docs/dtypes.md (one float32 operation with the scale, one rounding).
#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

/// For each token t with slot s = slot_mapping[t] != -1, copies the cache slot s of every kv
/// head into problem.key / problem.value row t: raw elements, or, with problem.dequantize,
/// code * scale (float32 product) rounded to problem.dtype. Rows with slot -1 are left
/// untouched. Throws std::invalid_argument (before writing) for an invalid problem or a raw
/// gather whose dtype differs from cache.dtype.
void gather_cached_kv(CacheCopyProblem& problem);

/// For each token t with slot s = slot_mapping[t] != -1, writes problem.key / problem.value row
/// t into cache slot s: exactly when problem.dtype == cache.dtype, otherwise as
/// quantize_fp8(value / scale) (float32 quotient). Slots -1 leave the cache untouched.
void reshape_and_cache(CacheCopyProblem& problem);

}  // namespace pagecheck::ref
