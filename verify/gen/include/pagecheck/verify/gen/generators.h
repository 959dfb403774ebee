#pragma once
/// RapidCheck generators of whole cases, valid by construction and weighted toward the places
/// kernels break (see docs/verify.md). Shrinking acts on shapes, lengths and tables; contents
/// come from a non-shrinking seed.
#include <cstdint>

#include <rapidcheck.h>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen {

/// Whether a case may, must or must not use a cache larger than 2^31 elements.
enum class LargeCache {
  kNever,   ///< ordinary sizes only (the default draws; CPU tests)
  kAlways,  ///< a cache over 2^31 elements with blocks referenced beyond that offset
};

/// Generator knobs.
struct GenOptions {
  LargeCache large = LargeCache::kNever;  ///< large-cache mode
};

/// Paged-attention cases within what `caps` declares: dtypes, cache dtypes and fp8 scale kinds,
/// page layouts, head and block sizes; ALiBi, token / head / output strides, shared or
/// independent cache padding, combined K/V, multi-token queries (up to max_query_len),
/// non-causal queries, sinks, windows, soft-caps and context-0 rows only where declared;
/// split-K edges at caps.edge_partitions(); large caches only for PC_CAP_LARGE_CACHE variants,
/// else kAlways falls back to an ordinary case.
rc::Gen<AttentionSpec> attention_spec(const VariantCaps& caps, const GenOptions& options = {});
/// Copy cases of caps.family (gather_cached_kv or reshape_and_cache), with fp8 caches (a
/// gather dequantizes only with PC_CAP_DEQUANTIZE), layouts, padding and strides as declared.
rc::Gen<CopySpec> copy_spec(const VariantCaps& caps, const GenOptions& options = {});
/// Cases of caps.family.
rc::Gen<CaseSpec> case_spec(const VariantCaps& caps, const GenOptions& options = {});

}  // namespace pagecheck::verify::gen
