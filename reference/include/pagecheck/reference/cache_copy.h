#pragma once
/// Reference KV-cache copies; both are exact element copies (no conversion).
#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

/// For each token t with slot s = slot_mapping[t] != -1, copies the cache slot s of every kv
/// head into problem.key / problem.value row t. Rows with slot -1 are left untouched.
void gather_cached_kv(CacheCopyProblem& problem);

/// For each token t with slot s = slot_mapping[t] != -1, writes problem.key / problem.value row
/// t into cache slot s. Slots -1 leave the cache untouched.
void reshape_and_cache(CacheCopyProblem& problem);

}  // namespace pagecheck::ref
