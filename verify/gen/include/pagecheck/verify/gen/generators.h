#pragma once
/// RapidCheck generators of whole cases, valid by construction and weighted toward the places
/// kernels break (see docs/verify.md). Shrinking acts on shapes, lengths and tables; contents
/// come from a non-shrinking seed.
#include <cstdint>

#include <rapidcheck.h>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen {

/// Tokens per split-K partition the long-context lengths are built around (the v2_split
/// kernel's partition size; kernels/docs name it).
constexpr int64_t kPartitionSize = 256;

/// Whether a case may, must or must not use a cache larger than 2^31 elements.
enum class LargeCache {
  kNever,   ///< ordinary sizes only (the default draws; CPU tests)
  kAlways,  ///< a cache over 2^31 elements with blocks referenced beyond that offset
};

/// Generator knobs.
struct GenOptions {
  LargeCache large = LargeCache::kNever;  ///< large-cache mode
};

/// Paged-attention cases within what `caps` declares (dtype, head size, block size; ALiBi,
/// strided query/output and padded caches only where the flags allow; large caches only for
/// PC_CAP_LARGE_CACHE variants, else kAlways falls back to an ordinary case).
rc::Gen<AttentionSpec> attention_spec(const VariantCaps& caps, const GenOptions& options = {});
/// Copy cases of caps.family (gather_cached_kv or reshape_and_cache).
rc::Gen<CopySpec> copy_spec(const VariantCaps& caps, const GenOptions& options = {});
/// Cases of caps.family.
rc::Gen<CaseSpec> case_spec(const VariantCaps& caps, const GenOptions& options = {});

}  // namespace pagecheck::verify::gen
