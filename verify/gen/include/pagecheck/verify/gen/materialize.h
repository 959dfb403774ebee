#pragma once
/// Deterministic contents for a spec: every input tensor filled from the content seed in the
/// spec's regime, and poison wherever no kernel may read: every cache element no sequence or
/// token reads (unused blocks, slots past the context, stride padding) holds the cache dtype's
/// poison NaN (DTypeInfo::poison_bits; an fp8 cache's NaN code) in K and V, block-table entries
/// past a sequence's last block are out of the pool, and the query's padding is NaN. Read
/// slots of an fp8 cache hold finite codes (fp8_scales.h in the sources says how the scales
/// shape them). Large caches are filled with a fast pattern copy.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen {

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
