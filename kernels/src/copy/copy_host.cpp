/// Argument checks and launch of the gather_cached_kv and reshape_and_cache variants: every
/// cache layout the strides describe (x-split, NHD, HND, combined K/V, padded strides), raw
/// copies of every dtype and fp8 caches with per-tensor or per-kv-head scales.
#include "copy/copy_host.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "common/host_checks.h"
#include "common/kernel_lists.h"
#include "copy/copy_plan.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

/// The token-side tensors; `key_name` / `value_name` name the fields ("key_out" for gather,
/// "key" for reshape).
struct TokenSide {
  const void* key;
  int64_t key_stride_token;
  int64_t key_stride_head;
  const void* value;
  int64_t value_stride_token;
  int64_t value_stride_head;
  const char* key_name;
  const char* value_name;
};

/// The fields both directions share, read with abi::read.
struct CopyCall {
  pc_family family;
  pc_dtype dtype;   ///< token-side dtype
  bool dequantize;  ///< gather only
  int64_t num_tokens;
  pc_kv_cache cache;
  const void* key_cache;
  const void* value_cache;
  const int64_t* slot_mapping;
  TokenSide tokens;
};

std::string str(int64_t v) {
  return std::to_string(v);
}

bool fp8(pc_dtype d) {
  return d == PC_DTYPE_FP8_E4M3 || d == PC_DTYPE_FP8_E5M2;
}

bool wide(pc_dtype d) {
  return d == PC_DTYPE_FLOAT32 || d == PC_DTYPE_FLOAT16 || d == PC_DTYPE_BFLOAT16;
}

/// The dtype pair: a raw copy (same dtype), or an fp8 conversion with scales.
KernelStatus check_dtypes(const CopyCall& c) {
  const pc_kv_cache& k = c.cache;
  if (abi::dtype_bytes(c.dtype) == 0 || abi::dtype_bytes(k.dtype) == 0) {
    return KernelStatus::unsupported("unsupported dtype: " + str(c.dtype) + " / cache.dtype " +
                                     str(k.dtype));
  }
  const std::string pair = std::string("dtype ") + abi::dtype_label(c.dtype) + ", cache.dtype " +
                           abi::dtype_label(k.dtype);
  if (!fp8(k.dtype) && (k.scale_kind != PC_SCALE_NONE || k.k_scale || k.v_scale)) {
    return KernelStatus::invalid("cache scales (scale_kind " + str(k.scale_kind) + ") with " +
                                 pair + ": only fp8 caches carry scales");
  }
  if (c.dtype == k.dtype) {
    if (c.dequantize) {
      return KernelStatus::invalid("dequantize with " + pair +
                                   ": dequantize needs an fp8 cache and a 16/32-bit dtype");
    }
    return KernelStatus::success();
  }
  if (!fp8(k.dtype) || !wide(c.dtype)) {
    return KernelStatus::unsupported(pair +
                                     ": no mixed-dtype copies (only fp8 caches convert, "
                                     "to and from float32, float16 and bfloat16)");
  }
  if (c.family == PC_FAMILY_GATHER_CACHED_KV && !c.dequantize) {
    return KernelStatus::invalid(
        pair + " without dequantize: a raw gather needs dtype == " + "cache.dtype");
  }
  if (k.scale_kind != PC_SCALE_PER_TENSOR && k.scale_kind != PC_SCALE_PER_KV_HEAD) {
    return KernelStatus::invalid("cache.scale_kind " + str(k.scale_kind) + " with " + pair +
                                 ": an fp8 conversion needs per-tensor or per-kv-head scales");
  }
  return first_failure(require_pointer(k.k_scale, "cache.k_scale"),
                       require_pointer(k.v_scale, "cache.v_scale"));
}

/// One cache tensor's strides: non-negative, dim_split dividing head_size.
KernelStatus check_strides(const pc_cache_strides& s, int64_t head_size, const std::string& n) {
  if (s.dim_split < 1 || head_size % s.dim_split != 0) {
    return KernelStatus::invalid(n + ".dim_split (" + str(s.dim_split) +
                                 ") must be >= 1 and divide head_size (" + str(head_size) + ")");
  }
  for (const auto& [value, field] :
       {std::pair{s.block, "block"}, std::pair{s.head, "head"}, std::pair{s.slot, "slot"},
        std::pair{s.group, "group"}, std::pair{s.dim, "dim"}}) {
    if (value < 0) {
      return KernelStatus::invalid(n + "." + field + " (" + str(value) + ") must be >= 0");
    }
  }
  return KernelStatus::success();
}

/// Sizes, kind, strides and the combined allocation.
KernelStatus check_cache(const CopyCall& c) {
  const pc_kv_cache& k = c.cache;
  if (k.kind != PC_CACHE_X_SPLIT && k.kind != PC_CACHE_NHD && k.kind != PC_CACHE_HND) {
    return KernelStatus::unsupported("cache.kind " + str(k.kind) + ": unknown page layout");
  }
  KernelStatus st = first_failure(require_min(k.num_blocks, 1, "cache.num_blocks"),
                                  require_min(k.num_kv_heads, 1, "cache.num_kv_heads"),
                                  require_min(k.head_size, 1, "cache.head_size"),
                                  require_min(k.block_size, 1, "cache.block_size"));
  if (!st.ok()) return st;
  if (!compiled_head_size(k.head_size)) {
    return KernelStatus::unsupported("unsupported head_size: " + str(k.head_size));
  }
  if (!compiled_block_size(k.block_size)) {
    return KernelStatus::unsupported("unsupported block_size: " + str(k.block_size));
  }
  st = first_failure(check_strides(k.key, k.head_size, "cache.key"),
                     check_strides(k.value, k.head_size, "cache.value"));
  if (!st.ok() || !k.combined) return st;
  const auto* key = static_cast<const char*>(c.key_cache);
  if (k.value_base < 1 ||
      static_cast<const char*>(c.value_cache) != key + k.value_base * abi::dtype_bytes(k.dtype)) {
    return KernelStatus::invalid("cache.combined: value_cache must be key_cache + value_base (" +
                                 str(k.value_base) + ") elements");
  }
  return KernelStatus::success();
}

/// True when every 16-byte chunk of `chunk` dims of the tensor is contiguous and aligned.
bool vector_chunks(const void* data, const pc_cache_strides& s, int64_t head_size, int64_t chunk) {
  const bool one_group = s.dim_split == head_size;
  return reinterpret_cast<uintptr_t>(data) % 16 == 0 && s.dim == 1 && s.dim_split % chunk == 0 &&
         s.block % chunk == 0 && s.head % chunk == 0 && s.slot % chunk == 0 &&
         (one_group || s.group % chunk == 0);
}

/// True when the tensor's slots are contiguous and every run of kTileTokens slots from an
/// offset that is a multiple of kTileTokens is aligned for the row pieces of copy_slot_rows.cuh
/// (min(16, kTileTokens x element bytes) bytes), within one block.
bool slot_rows(const void* data, const pc_cache_strides& s, int64_t head_size, int64_t block_size,
               int64_t elem_bytes) {
  const int64_t piece = std::min<int64_t>(16, copy_detail::kTileTokens * elem_bytes);
  const auto aligned = [&](int64_t stride) { return stride * elem_bytes % piece == 0; };
  const bool one_group = s.dim_split == head_size;
  return s.slot == 1 && block_size % copy_detail::kTileTokens == 0 &&
         reinterpret_cast<uintptr_t>(data) % piece == 0 && aligned(s.block) && aligned(s.head) &&
         aligned(s.dim) && (one_group || aligned(s.group));
}

CacheTensor cache_tensor(const void* data, const pc_cache_strides& s, const pc_kv_cache& k) {
  const int64_t bytes = abi::dtype_bytes(k.dtype);
  const bool vector = vector_chunks(data, s, k.head_size, 16 / bytes);
  return {const_cast<void*>(data),
          s.block,
          s.head,
          s.slot,
          s.group,
          s.dim,
          static_cast<int32_t>(s.dim_split),
          vector ? 1 : 0,
          !vector && slot_rows(data, s, k.head_size, k.block_size, bytes) ? 1 : 0};
}

/// Kernel parameters of a checked call: vector and slot-row flags per cache tensor,
/// token-fastest lanes unless both cache tensors take 16-byte chunks, one item per thread below
/// kUnrollFromItems, else copy_unroll() of the bytes an item loads per tensor.
CopyParams make_params(const CopyCall& c) {
  const pc_kv_cache& k = c.cache;
  const int64_t chunk = 16 / abi::dtype_bytes(k.dtype);
  CopyParams p{};
  p.num_tokens = c.num_tokens;
  p.num_kv_heads = static_cast<int32_t>(k.num_kv_heads);
  p.head_size = static_cast<int32_t>(k.head_size);
  p.block_size = static_cast<int32_t>(k.block_size);
  p.key_cache = cache_tensor(c.key_cache, k.key, k);
  p.value_cache = cache_tensor(c.value_cache, k.value, k);
  const TokenSide& t = c.tokens;
  p.key = {const_cast<void*>(t.key), t.key_stride_token, t.key_stride_head};
  p.value = {const_cast<void*>(t.value), t.value_stride_token, t.value_stride_head};
  p.slot_mapping = c.slot_mapping;
  p.k_scale = k.k_scale;
  p.v_scale = k.v_scale;
  p.scale_per_head = k.scale_kind == PC_SCALE_PER_KV_HEAD ? 1 : 0;
  p.fp8_e5m2 = k.dtype == PC_DTYPE_FP8_E5M2 ? 1 : 0;
  p.token_fastest = p.key_cache.vector && p.value_cache.vector ? 0 : 1;
  p.unroll = 1;
  const int vectors = static_cast<int>(k.num_kv_heads * (k.head_size / chunk));
  if (copy_detail::tile_items(c.num_tokens, vectors, p.token_fastest != 0) >=
      copy_detail::kUnrollFromItems) {
    p.unroll = copy_detail::large_unroll(static_cast<int>(abi::dtype_bytes(c.dtype)),
                                         static_cast<int>(abi::dtype_bytes(k.dtype)));
  }
  // Items per tile (token_fastest) or per token; staged: blocks per tile. At least 1: the
  // scalar variants take head sizes below one chunk (and read none of the three).
  const int per = copy_detail::staged(p) ? copy_detail::staged_runs(vectors, p.unroll)
                  : p.token_fastest      ? copy_detail::kTileTokens * vectors
                                         : vectors;
  const auto div = [](int64_t d) {
    return copy_detail::make_fast_div(static_cast<uint32_t>(std::max<int64_t>(d, 1)));
  };
  p.item_div = div(per);
  p.chunk_div = div(k.head_size / chunk);
  p.block_div = div(k.block_size);
  return p;
}

/// The vectorized kernels' needs: whole chunks per head, 16-byte token-side accesses, a grid
/// that fits. The cache side needs nothing (strided scalar accesses where a chunk is not
/// contiguous and aligned).
KernelStatus check_vectorized(const CopyCall& c) {
  const int64_t chunk = 16 / abi::dtype_bytes(c.cache.dtype);
  if (c.cache.head_size % chunk != 0) {
    return KernelStatus::unsupported("cache.head_size (" + str(c.cache.head_size) +
                                     ") is not a multiple of the " + str(chunk) +
                                     " dims of a 16-byte cache chunk");
  }
  const TokenSide& t = c.tokens;
  const int64_t x = 16 / abi::dtype_bytes(c.dtype);
  const KernelStatus st =
      first_failure(require_aligned16(t.key, t.key_name, "16-byte row accesses"),
                    require_vector_stride(t.key_stride_token, x, "key_stride_token"),
                    require_vector_stride(t.key_stride_head, x, "key_stride_head"),
                    require_aligned16(t.value, t.value_name, "16-byte row accesses"),
                    require_vector_stride(t.value_stride_token, x, "value_stride_token"),
                    require_vector_stride(t.value_stride_head, x, "value_stride_head"));
  if (!st.ok()) return st;
  if (c.cache.num_kv_heads * (c.cache.head_size / chunk) * copy_detail::kTileTokens >
      std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("cache.num_kv_heads (" + str(c.cache.num_kv_heads) +
                                     ") x head_size chunks of 16 bytes exceed 2^31 / " +
                                     str(copy_detail::kTileTokens));
  }
  const CopyParams p = make_params(c);
  const int64_t blocks = copy_detail::grid_blocks(p, static_cast<int>(chunk));
  if (blocks > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("the copy needs " + str(blocks) +
                                     " thread blocks (> 2^31 - 1)");
  }
  return KernelStatus::success();
}

KernelStatus check_copy(CopyVariant variant, const CopyCall& c) {
  KernelStatus st = require_struct_size(c.cache.struct_size, "args.cache");
  if (!st.ok()) return st;
  st = first_failure(require_min(c.num_tokens, 0, "num_tokens"),
                     require_pointer(c.key_cache, "key_cache"),
                     require_pointer(c.value_cache, "value_cache"),
                     require_pointer(c.slot_mapping, "slot_mapping"),
                     require_pointer(c.tokens.key, c.tokens.key_name),
                     require_pointer(c.tokens.value, c.tokens.value_name),
                     require_min(c.tokens.key_stride_head, 1, "key_stride_head"),
                     require_min(c.tokens.key_stride_token, 1, "key_stride_token"),
                     require_min(c.tokens.value_stride_head, 1, "value_stride_head"),
                     require_min(c.tokens.value_stride_token, 1, "value_stride_token"));
  if (!st.ok()) return st;
  st = first_failure(check_dtypes(c), check_cache(c));
  if (!st.ok()) return st;
  if (c.num_tokens > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("num_tokens (" + str(c.num_tokens) + ") exceeds 2^31 - 1");
  }
  return variant == CopyVariant::kScalar ? KernelStatus::success() : check_vectorized(c);
}

/// A token-side tensor's pointer and the name of its field in the arguments.
struct TokenField {
  const void* data;  ///< the tensor
  const char* name;  ///< its field ("key_out", "value", ...)
};

/// The CopyCall of either family's arguments, which spell every shared field alike; the family,
/// dequantize and the token tensors (named differently in each) come from the caller.
template <typename Args>
CopyCall copy_call(const Args& a, pc_family family, bool dequantize, TokenField key,
                   TokenField value) {
  return {family,
          a.dtype,
          dequantize,
          a.num_tokens,
          a.cache,
          a.key_cache,
          a.value_cache,
          a.slot_mapping,
          {key.data, a.key_stride_token, a.key_stride_head, value.data, a.value_stride_token,
           a.value_stride_head, key.name, value.name}};
}

CopyCall gather_call(const pc_gather_args& a) {
  return copy_call(a, PC_FAMILY_GATHER_CACHED_KV, a.dequantize != 0, {a.key_out, "key_out"},
                   {a.value_out, "value_out"});
}

CopyCall reshape_call(const pc_reshape_and_cache_args& a) {
  return copy_call(a, PC_FAMILY_RESHAPE_AND_CACHE, false, {a.key, "key"}, {a.value, "value"});
}

}  // namespace

KernelStatus check_gather(CopyVariant variant, const pc_gather_args* a) {
  if (a == nullptr) return KernelStatus::invalid("args is NULL");
  const KernelStatus st = require_struct_size(a->struct_size, "args");
  return st.ok() ? check_copy(variant, gather_call(abi::read(*a))) : st;
}

KernelStatus check_reshape(CopyVariant variant, const pc_reshape_and_cache_args* a) {
  if (a == nullptr) return KernelStatus::invalid("args is NULL");
  const KernelStatus st = require_struct_size(a->struct_size, "args");
  return st.ok() ? check_copy(variant, reshape_call(abi::read(*a))) : st;
}

KernelStatus run_gather(CopyVariant variant, const pc_gather_args* args, cudaStream_t stream) {
  const KernelStatus st = check_gather(variant, args);
  if (!st.ok()) return st;
  const CopyCall c = gather_call(abi::read(*args));
  return launch_gather(variant, {c.dtype, c.cache.dtype}, make_params(c), stream);
}

KernelStatus run_reshape(CopyVariant variant, const pc_reshape_and_cache_args* args,
                         cudaStream_t stream) {
  const KernelStatus st = check_reshape(variant, args);
  if (!st.ok()) return st;
  const CopyCall c = reshape_call(abi::read(*args));
  return launch_reshape(variant, {c.dtype, c.cache.dtype}, make_params(c), stream);
}

}  // namespace pagecheck::kernels
