#pragma once
/// Deterministic contents for a spec: every input tensor filled from the content seed in the
/// spec's regime, and poison wherever no kernel may read: every cache element no sequence or
/// token reads (unused blocks, slots past the context, stride padding) is NaN in K and V,
/// block-table entries past a sequence's last block are out of the pool, and the query's
/// padding is NaN. Large caches are filled with a fast pattern copy.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen {

/// NaN bit patterns used as poison (quiet NaNs with a recognisable payload).
uint32_t poison_bits(DType dtype);
/// NaN bit pattern the copy outputs start with (differs from poison_bits, so a kernel that
/// copies a poisoned cache element into a row is told apart from one that never wrote it).
uint32_t output_poison_bits(DType dtype);

/// The problem described by `spec` (validated by ref::PagedAttentionProblem::validate()).
ref::PagedAttentionProblem materialize(const AttentionSpec& spec);
/// The problem described by `spec`. For gather, problem.key / problem.value are the output
/// buffers' initial contents (output poison everywhere); for reshape_and_cache, the cache
/// starts as poison with older tokens in the blocks the case writes to.
ref::CacheCopyProblem materialize(const CopySpec& spec);

/// Marks the cache slots some sequence reads: readable[block * block_size + slot].
std::vector<bool> readable_slots(const AttentionSpec& spec);

/// Fills `bytes` bytes at `dst` with copies of the `pattern_bytes`-byte pattern (fast doubling
/// memcpy; used for the poison of multi-GiB caches).
void fill_pattern(std::byte* dst, std::size_t bytes, const void* pattern,
                  std::size_t pattern_bytes);

}  // namespace pagecheck::verify::gen
