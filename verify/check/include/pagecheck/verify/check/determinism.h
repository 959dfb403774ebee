#pragma once
/// The determinism check: a case's kernel runs twice on the same inputs (fresh outputs, fresh
/// poison and guards each time) and the two outputs must agree bit for bit, unless the variant
/// declares itself nondeterministic (VariantCaps::nondeterministic), in which case both runs
/// are compared with the reference instead. A race that usually gives the right answer is a
/// bug; this is where it shows.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/check/compare.h"
#include "pagecheck/verify/device_runner.h"

namespace pagecheck::verify::check {

/// True when case `index` of a run is checked for determinism at share `share` (0..1): the
/// checked cases are spread evenly over the indices (every case at 1, every fourth at 0.25,
/// none at 0), independently of the seed, so shards agree.
bool checks_determinism(double share, int64_t index);

/// Bit-for-bit comparison of two runs' attention outputs (packed [seq, head, dim]); the first
/// difference is named "out element i (seq s, head h, dim d): run 1 bits … run 2 bits …".
CopyComparison compare_attention_runs(const ref::PagedAttentionProblem& p,
                                      const std::vector<std::byte>& first,
                                      const std::vector<std::byte>& second);

/// Bit-for-bit comparison of two runs' copy outputs (gather: key_out and value_out; reshape:
/// key_cache and value_cache, padding included), positions as in compare_copy.
CopyComparison compare_copy_runs(const ref::CacheCopyProblem& p, bool gather, const CopyRun& first,
                                 const CopyRun& second);

/// "outputs of two runs on the same inputs differ in 1 of 4096 elements; first: …".
std::string describe_runs(const CopyComparison& c);

}  // namespace pagecheck::verify::check
