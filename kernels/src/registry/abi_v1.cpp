/// Version-2 call arguments as version-1 arguments, for variants of ABI version 1.
#include "registry/abi_v1.h"

#include "pagecheck/plugin_read.h"

namespace pagecheck::detail {

uint64_t caps_from_v1(uint32_t v1) {
  uint64_t caps = 0;
  if (v1 & PC_V1_CAP_ALIBI) caps |= PC_CAP_ALIBI;
  if (v1 & PC_V1_CAP_STRIDED_TOKENS) {
    caps |= PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT;
  }
  if (v1 & PC_V1_CAP_PADDED_CACHE) caps |= PC_CAP_CACHE_PAD | PC_CAP_CACHE_PAD_SHARED;
  if (v1 & PC_V1_CAP_LARGE_CACHE) caps |= PC_CAP_LARGE_CACHE;
  return caps;
}

const void* ArgsV1::of(pc_family family) const {
  switch (family) {
    case PC_FAMILY_PAGED_ATTENTION:
      return &attention;
    case PC_FAMILY_GATHER_CACHED_KV:
      return &gather;
    case PC_FAMILY_RESHAPE_AND_CACHE:
      return &reshape;
  }
  return nullptr;
}

namespace {

ConversionResult ok() {
  return {};
}
ConversionResult cannot(const std::string& what) {
  return {PC_STATUS_UNSUPPORTED, "ABI v1 variant: cannot express " + what};
}
ConversionResult malformed(const std::string& what) {
  return {PC_STATUS_INVALID_ARGUMENT, what};
}

bool v1_dtype(pc_dtype d) {
  return d == PC_DTYPE_FLOAT32 || d == PC_DTYPE_FLOAT16 || d == PC_DTYPE_BFLOAT16;
}

/// The token-side dtype: one of the three v1 knows.
ConversionResult token_dtype(pc_dtype dtype) {
  if (v1_dtype(dtype)) return ok();
  return cannot(std::string(abi::dtype_label(dtype)) + " tokens (v1 knows float32, float16 and " +
                "bfloat16)");
}

/// The cache as a v1 layout: x-split, the token dtype, no scales, separate K and V, keys split
/// into groups of x = 16 / element size with unit dim stride, values with unit slot stride.
ConversionResult cache_to_v1(const pc_kv_cache& c, pc_dtype dtype, pc_cache_layout_v1* out) {
  if (c.struct_size == 0)
    return malformed("cache.struct_size is 0 (set it to sizeof(pc_kv_cache))");
  if (c.dtype != dtype) {
    if (!v1_dtype(c.dtype)) return cannot(std::string(abi::dtype_label(c.dtype)) + " caches");
    return cannot(std::string("a ") + abi::dtype_label(c.dtype) + " cache with " +
                  abi::dtype_label(dtype) + " tokens (v1: one dtype for every tensor)");
  }
  if (c.kind != PC_CACHE_X_SPLIT) {
    return cannot(std::string(c.kind == PC_CACHE_NHD   ? "NHD"
                              : c.kind == PC_CACHE_HND ? "HND"
                                                       : "unknown-kind") +
                  " caches (v1 knows the x-split layout only)");
  }
  if (c.scale_kind != PC_SCALE_NONE || c.k_scale != nullptr || c.v_scale != nullptr) {
    return cannot("cache scales");
  }
  if (c.combined != 0) return cannot("combined K/V caches");
  const int64_t x = 16 / abi::dtype_bytes(dtype);
  if (c.key.dim_split != x) {
    return cannot("key dim groups of " + std::to_string(c.key.dim_split) +
                  " (v1: x = " + std::to_string(x) + ")");
  }
  if (c.key.dim != 1)
    return cannot("a key dim stride of " + std::to_string(c.key.dim) + " (v1: 1)");
  if (c.value.slot != 1) {
    return cannot("a value slot stride of " + std::to_string(c.value.slot) + " (v1: 1)");
  }
  if (c.value.dim_split != c.head_size) {
    return cannot("value dim groups of " + std::to_string(c.value.dim_split) + " (v1: head_size " +
                  std::to_string(c.head_size) + ")");
  }
  *out = pc_cache_layout_v1{c.num_blocks, c.num_kv_heads, c.head_size, c.block_size, x,
                            c.key.block,  c.key.head,     c.key.group, c.key.slot,   c.value.block,
                            c.value.head, c.value.dim};
  return ok();
}

/// What every family's conversion starts with: reads the version-2 arguments `raw` into `a`
/// (a struct_size of 0 is malformed), runs the family's own first checks `check(a)`, then
/// converts the token dtype and the cache into `cache`.
template <typename Args, typename Check>
ConversionResult read_and_convert_cache(const Args& raw, Args& a, pc_cache_layout_v1& cache,
                                        Check check) {
  if (raw.struct_size == 0) return malformed("args.struct_size is 0");
  a = abi::read(raw);
  ConversionResult r = check(a);
  if (r.status != PC_STATUS_OK) return r;
  r = token_dtype(a.dtype);
  if (r.status != PC_STATUS_OK) return r;
  return cache_to_v1(a.cache, a.dtype, &cache);
}

ConversionResult attention_to_v1(const pc_paged_attention_args& raw,
                                 pc_paged_attention_args_v1* out) {
  pc_paged_attention_args a{};
  pc_cache_layout_v1 cache{};
  const ConversionResult r =
      read_and_convert_cache(raw, a, cache, [](const pc_paged_attention_args& args) {
        if (args.batch.struct_size == 0) return malformed("args.batch.struct_size is 0");
        if (args.features.struct_size == 0) return malformed("args.features.struct_size is 0");
        return ok();
      });
  if (r.status != PC_STATUS_OK) return r;
  const pc_ragged_batch& b = a.batch;
  if (b.query_start != nullptr || b.max_query_len > 1) {
    return cannot("more than one query token per sequence (query_start / max_query_len " +
                  std::to_string(b.max_query_len) + ")");
  }
  if (b.num_query_tokens != b.num_seqs) {
    return malformed("batch.num_query_tokens (" + std::to_string(b.num_query_tokens) +
                     ") differs from batch.num_seqs (" + std::to_string(b.num_seqs) +
                     ") without query_start");
  }
  const pc_attention_features& f = a.features;
  if (f.sinks != nullptr) return cannot("attention sinks");
  if (f.window != 0) return cannot("a sliding window");
  if (f.soft_cap != 0.0f) return cannot("a logit soft-cap");
  // features.causal does not matter with one query token per sequence.
  pc_paged_attention_args_v1& v = *out;
  v = pc_paged_attention_args_v1{};
  v.dtype = a.dtype;
  v.num_seqs = b.num_seqs;
  v.num_heads = a.num_heads;
  v.max_blocks_per_seq = b.max_blocks_per_seq;
  v.max_context_len = b.max_context_len;
  v.scale = a.scale;
  v.query = a.query;
  v.query_stride_seq = a.query_stride_token;
  v.query_stride_head = a.query_stride_head;
  v.key_cache = a.key_cache;
  v.value_cache = a.value_cache;
  v.cache = cache;
  v.block_table = b.block_table;
  v.block_table_stride = b.block_table_stride;
  v.context_lens = b.context_lens;
  v.alibi_slopes = f.alibi_slopes;
  v.out = a.out;
  v.out_stride_seq = a.out_stride_token;
  v.out_stride_head = a.out_stride_head;
  return ok();
}

ConversionResult gather_to_v1(const pc_gather_args& raw, pc_gather_args_v1* out) {
  pc_gather_args a{};
  pc_cache_layout_v1 cache{};
  const ConversionResult r = read_and_convert_cache(raw, a, cache, [](const pc_gather_args& args) {
    return args.dequantize != 0 ? cannot("a dequantizing gather") : ok();
  });
  if (r.status != PC_STATUS_OK) return r;
  *out = pc_gather_args_v1{a.dtype,
                           a.num_tokens,
                           a.key_cache,
                           a.value_cache,
                           cache,
                           a.slot_mapping,
                           a.key_out,
                           a.key_stride_token,
                           a.key_stride_head,
                           a.value_out,
                           a.value_stride_token,
                           a.value_stride_head};
  return ok();
}

ConversionResult reshape_to_v1(const pc_reshape_and_cache_args& raw,
                               pc_reshape_and_cache_args_v1* out) {
  pc_reshape_and_cache_args a{};
  pc_cache_layout_v1 cache{};
  const ConversionResult r =
      read_and_convert_cache(raw, a, cache, [](const pc_reshape_and_cache_args&) { return ok(); });
  if (r.status != PC_STATUS_OK) return r;
  *out = pc_reshape_and_cache_args_v1{a.dtype,
                                      a.num_tokens,
                                      a.key,
                                      a.key_stride_token,
                                      a.key_stride_head,
                                      a.value,
                                      a.value_stride_token,
                                      a.value_stride_head,
                                      a.key_cache,
                                      a.value_cache,
                                      cache,
                                      a.slot_mapping};
  return ok();
}

}  // namespace

ConversionResult to_v1(pc_family family, const void* args, ArgsV1* out) {
  if (args == nullptr) return malformed("args is NULL");
  switch (family) {
    case PC_FAMILY_PAGED_ATTENTION:
      return attention_to_v1(*static_cast<const pc_paged_attention_args*>(args), &out->attention);
    case PC_FAMILY_GATHER_CACHED_KV:
      return gather_to_v1(*static_cast<const pc_gather_args*>(args), &out->gather);
    case PC_FAMILY_RESHAPE_AND_CACHE:
      return reshape_to_v1(*static_cast<const pc_reshape_and_cache_args*>(args), &out->reshape);
  }
  return malformed("unknown family " + std::to_string(static_cast<int>(family)));
}

}  // namespace pagecheck::detail
