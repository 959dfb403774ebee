/// Generic planted kernels of issues 15 and 16: attention with one thread per (query row, head)
/// running the row of planted_row.h (the CPU simulations run the same code), and copies with
/// one block per token over any layout, raw or through the fp8 conversions of docs/dtypes.md.
/// Simple on purpose: correctness of the controls, not speed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "planted_features_kernels.h"

namespace pagecheck::verify::planted {
namespace {

constexpr int kThreads = 128;

/// Stores `v` rounded to nearest even into element `i` of a 16/32-bit buffer.
__device__ void store_float(pc_dtype dtype, void* base, int64_t i, float v) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      static_cast<float*>(base)[i] = v;
      break;
    case PC_DTYPE_FLOAT16:
      static_cast<__half*>(base)[i] = __float2half_rn(v);
      break;
    case PC_DTYPE_BFLOAT16:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
      break;
    default:
      break;  // fp8 is never a token dtype of a conversion (can_implement)
  }
}

/// Copies the bytes of element `from_index` to element `to_index` (bit exact, NaN payloads too).
__device__ void copy_raw(pc_dtype dtype, const void* from, int64_t from_index, void* to,
                         int64_t to_index) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      static_cast<uint32_t*>(to)[to_index] = static_cast<const uint32_t*>(from)[from_index];
      break;
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16:
      static_cast<uint16_t*>(to)[to_index] = static_cast<const uint16_t*>(from)[from_index];
      break;
    case PC_DTYPE_FP8_E4M3:
    case PC_DTYPE_FP8_E5M2:
      static_cast<uint8_t*>(to)[to_index] = static_cast<const uint8_t*>(from)[from_index];
      break;
  }
}

__global__ void feature_attention_kernel(const AttentionParams p, RowBug bug, float* workspace) {
  const int64_t heads = p.row.num_heads, hs = p.row.head_size;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.num_rows * heads) return;
  const int64_t row = i / heads, head = i % heads;
  float* logits = workspace + i * (p.max_context_len + hs);
  float* out = logits + p.max_context_len;
  attend_row(p.row, bug, row, head, logits, out);
  for (int64_t d = 0; d < hs; ++d) {
    store_float(p.row.dtype, p.out, row * p.out_stride_token + head * p.out_stride_head + d,
                out[d]);
  }
}

/// The scale of kv head `head` (1 without scales).
__device__ float copy_scale(const FeatureCopyParams& a, const float* scales, int64_t head) {
  if (a.scale_kind == PC_SCALE_NONE || scales == nullptr) return 1.f;
  return scales[a.scale_kind == PC_SCALE_PER_KV_HEAD ? head : 0];
}

/// fp8 code of float32 `q` (= value / scale), round to nearest even; saturating unless planted.
__device__ uint8_t quantize(float q, pc_dtype kv_dtype, CopyBug bug) {
  const __nv_saturation_t sat = bug == CopyBug::kNoSaturation ? __NV_NOSAT : __NV_SATFINITE;
  return __nv_cvt_float_to_fp8(q, sat, kv_dtype == PC_DTYPE_FP8_E4M3 ? __NV_E4M3 : __NV_E5M2);
}

/// Calls `f(h, k_cache, v_cache, k_token, v_token)` with the K and V element offsets in the cache
/// and in the token tensors of every (kv head h, dim) of the token of block blockIdx.x, spread
/// over the block's threads; nothing for a token of slot -1.
template <typename F>
__device__ void for_each_token_element(const FeatureCopyParams& a, F f) {
  const int64_t t = blockIdx.x;
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0) return;
  const int64_t block = slot / a.block_size, offset = slot % a.block_size;
  for (int64_t e = threadIdx.x; e < a.num_kv_heads * a.head_size; e += blockDim.x) {
    const int64_t h = e / a.head_size, d = e % a.head_size;
    f(h, row_cache_offset(a.key_strides, block, h, offset, d, false),
      row_cache_offset(a.value_strides, block, h, offset, d, false),
      t * a.key_stride_token + h * a.key_stride_head + d,
      t * a.value_stride_token + h * a.value_stride_head + d);
  }
}

__global__ void feature_gather_kernel(const FeatureCopyParams a) {
  const bool raw = a.dtype == a.kv_dtype;  // raw bytes (fp8 codes too), as the reference
  for_each_token_element(a, [&](int64_t h, int64_t k_src, int64_t v_src, int64_t k_dst,
                                int64_t v_dst) {
    if (raw) {
      copy_raw(a.kv_dtype, a.key_cache, k_src, a.key, k_dst);
      copy_raw(a.kv_dtype, a.value_cache, v_src, a.value, v_dst);
    } else {  // float32(code) * scale in float32, one rounding to dtype
      store_float(a.dtype, a.key, k_dst,
                  load_as_float(a.kv_dtype, a.key_cache, k_src) * copy_scale(a, a.k_scale, h));
      store_float(a.dtype, a.value, v_dst,
                  load_as_float(a.kv_dtype, a.value_cache, v_src) * copy_scale(a, a.v_scale, h));
    }
  });
}

__global__ void feature_reshape_kernel(const FeatureCopyParams a, CopyBug bug) {
  const bool raw = a.dtype == a.kv_dtype;
  for_each_token_element(
      a, [&](int64_t h, int64_t k_dst, int64_t v_dst, int64_t k_src, int64_t v_src) {
        if (raw) {
          copy_raw(a.dtype, a.key, k_src, a.key_cache, k_dst);
          copy_raw(a.dtype, a.value, v_src, a.value_cache, v_dst);
        } else {  // float32(value) / scale in float32, then the fp8 code
          const float k = load_as_float(a.dtype, a.key, k_src) / copy_scale(a, a.k_scale, h);
          const float v = load_as_float(a.dtype, a.value, v_src) / copy_scale(a, a.v_scale, h);
          static_cast<uint8_t*>(a.key_cache)[k_dst] = quantize(k, a.kv_dtype, bug);
          static_cast<uint8_t*>(a.value_cache)[v_dst] = quantize(v, a.kv_dtype, bug);
        }
      });
}

const char* launched(const char* what) {
  return cudaGetLastError() == cudaSuccess ? "" : what;
}

}  // namespace

size_t feature_attention_workspace(const AttentionParams& p) {
  const int64_t per = p.max_context_len + p.row.head_size;
  return static_cast<size_t>(p.num_rows * p.row.num_heads * per) * sizeof(float);
}

const char* launch_feature_attention(const AttentionParams& p, RowBug bug, void* workspace,
                                     void* stream) {
  const int64_t threads = p.num_rows * p.row.num_heads;
  if (threads == 0) return "";
  const unsigned grid = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  feature_attention_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      p, bug, static_cast<float*>(workspace));
  return launched("planted feature attention kernel launch failed");
}

const char* launch_feature_gather(const FeatureCopyParams& p, void* stream) {
  if (p.num_tokens == 0) return "";
  feature_gather_kernel<<<static_cast<unsigned>(p.num_tokens), kThreads, 0,
                          static_cast<cudaStream_t>(stream)>>>(p);
  return launched("planted feature gather kernel launch failed");
}

const char* launch_feature_reshape(const FeatureCopyParams& p, CopyBug bug, void* stream) {
  if (p.num_tokens == 0) return "";
  feature_reshape_kernel<<<static_cast<unsigned>(p.num_tokens), kThreads, 0,
                           static_cast<cudaStream_t>(stream)>>>(p, bug);
  return launched("planted feature reshape kernel launch failed");
}

}  // namespace pagecheck::verify::planted
