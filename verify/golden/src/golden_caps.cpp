/// What a golden needs of a variant, and why a variant cannot run it.
#include "golden_caps.h"

#include <algorithm>

#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::golden {
namespace {

/// What a token tensor's strides need: HEAD_STRIDE for heads further apart than head_size,
/// TOKEN_STRIDE for rows further apart than the heads fill.
uint64_t token_caps(const ref::TokenLayout& t) {
  uint64_t caps = 0;
  if (t.stride_head != t.head_size) caps |= PC_CAP_HEAD_STRIDE;
  if (t.stride_token != t.num_heads * t.stride_head) caps |= PC_CAP_TOKEN_STRIDE;
  return caps;
}

/// What a cache needs: padding (shared by K and V as the spec padded it, or not), K and V in
/// one allocation, more than 2^31 elements.
uint64_t cache_caps(const ref::PagedCacheLayout& cache, const gen::CacheSpec& spec) {
  uint64_t caps = 0;
  if (!cache.packed()) caps |= spec.pad.shared() ? PC_CAP_CACHE_PAD_SHARED : PC_CAP_CACHE_PAD;
  if (cache.combined) caps |= PC_CAP_COMBINED_KV;
  if (std::max(cache.key_span(), cache.value_span()) > gen::kLargeCacheElements) {
    caps |= PC_CAP_LARGE_CACHE;
  }
  return caps;
}

/// The PC_CAP_* flags running `g` needs.
uint64_t needed_caps(const LoadedGolden& g) {
  const gen::CacheSpec& cache_spec =
      std::visit([](const auto& s) -> const gen::CacheSpec& { return s.cache; }, g.spec);
  if (g.family != PC_FAMILY_PAGED_ATTENTION) {
    const ref::CacheCopyProblem& p = g.copy;
    return cache_caps(p.cache, cache_spec) | token_caps(p.key_layout) | token_caps(p.value_layout) |
           (p.dequantize ? uint64_t{PC_CAP_DEQUANTIZE} : uint64_t{0});
  }
  const ref::PagedAttentionProblem& p = g.attention;
  const ref::AttentionFeatures& f = p.features;
  uint64_t caps = cache_caps(p.cache, cache_spec) | token_caps(p.query_layout);
  if (!f.alibi_slopes.empty()) caps |= PC_CAP_ALIBI;
  if (!f.sinks.empty()) caps |= PC_CAP_SINKS;
  if (f.window > 0) caps |= PC_CAP_WINDOW;
  if (f.soft_cap > 0) caps |= PC_CAP_SOFT_CAP;
  if (!f.causal && p.batch.max_query_len() > 1) caps |= PC_CAP_NON_CAUSAL;
  return caps;
}

}  // namespace

std::string unsupported_reason(const VariantInfo& variant, const LoadedGolden& g) {
  const bool attention = g.family == PC_FAMILY_PAGED_ATTENTION;
  const ref::PagedCacheLayout& cache = attention ? g.attention.cache : g.copy.cache;
  if (!variant.supports(to_abi(g.dtype), cache.head_size, cache.block_size)) {
    return "dtype/head size/block size not declared";
  }
  if (!variant.supports_kv_dtype(to_abi(g.dtype), to_abi(cache.dtype))) {
    return std::string("cache dtype ") + dtype_name(cache.dtype) + " not declared";
  }
  if (!variant.supports_cache_kind(to_abi(cache.kind))) {
    return std::string("cache kind ") + ref::cache_kind_name(cache.kind) + " not declared";
  }
  if (!variant.supports_scale_kind(to_abi(cache.scale_kind))) {
    return std::string("scale kind ") + ref::scale_kind_name(cache.scale_kind) + " not declared";
  }
  uint64_t needed = needed_caps(g);
  // Padding shared by K and V is also served by a variant that pads them independently.
  if ((needed & PC_CAP_CACHE_PAD_SHARED) && variant.has_caps(PC_CAP_CACHE_PAD)) {
    needed &= ~static_cast<uint64_t>(PC_CAP_CACHE_PAD_SHARED);
  }
  const uint64_t missing = needed & ~variant.variant.caps;
  if (missing != 0) {
    std::string names;
    for (const std::string& name : gen::cap_names(missing)) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return names + " not declared";
  }
  if (attention) {
    const ref::RaggedBatch& b = g.attention.batch;
    if (b.max_query_len() > variant.max_query_len()) {
      return "query length " + std::to_string(b.max_query_len()) + " beyond the declared " +
             std::to_string(variant.max_query_len());
    }
    const bool empty_row =
        std::find(b.context_lens.begin(), b.context_lens.end(), 0) != b.context_lens.end();
    if (empty_row && variant.variant.context0 == PC_CONTEXT0_UNSUPPORTED) {
      return "context length 0 not declared";
    }
  }
  return "";
}

}  // namespace pagecheck::verify::golden
