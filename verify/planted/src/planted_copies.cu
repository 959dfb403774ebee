/// Planted KV-cache copy kernels: one block per token, one thread per (head, dim) element, with
/// a runtime switch that plants one bug.
#include <cuda_runtime.h>

#include "planted_device.cuh"
#include "planted_kernels.h"

namespace pagecheck::verify::planted {
namespace {

/// C semantics on purpose: slot -1 gives block 0, offset -1 (what the planted bugs use).
__device__ __forceinline__ void split_slot(int64_t slot, int64_t bs, int64_t* block,
                                           int64_t* offset) {
  *block = slot / bs;
  *offset = slot % bs;
}

/// Elements of one token (over all kv heads) the kernel copies: all of them, or
/// (kCopyOneBlockPerToken, a kernel giving each of one block's at most kOneBlockVectors
/// threads one 16-byte vector and no loop) those of the first kOneBlockVectors vectors.
template <typename T>
__device__ __forceinline__ int64_t copied_elements(const CopyParams& a, Bug bug) {
  const int64_t all = a.num_kv_heads * a.head_size;
  const int64_t cap = kOneBlockVectors * kernels::kVecElems<T>;
  return bug == Bug::kCopyOneBlockPerToken && all > cap ? cap : all;
}

template <typename T>
__global__ void gather_kernel(const CopyParams a, Bug bug) {
  const int64_t t = blockIdx.x;
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0 && bug != Bug::kGatherSlotMinus1) return;
  int64_t block, offset;
  split_slot(slot, a.block_size, &block, &offset);
  const T* key_cache = static_cast<const T*>(a.key_cache);
  const T* value_cache = static_cast<const T*>(a.value_cache);
  T* key_out = static_cast<T*>(a.key);
  T* value_out = static_cast<T*>(a.value);
  const int64_t elements = copied_elements<T>(a, bug);
  for (int64_t e = threadIdx.x; e < elements; e += blockDim.x) {
    const int64_t h = e / a.head_size, d = e % a.head_size;
    const int64_t key_src =
        bug == Bug::kGatherXSplitOffset
            ? block * a.key_strides.block + h * a.key_strides.head + d * a.block_size + offset
            : cache_offset(a.key_strides, block, h, offset, d);
    key_out[t * a.key_stride_token + h * a.key_stride_head + d] = key_cache[key_src];
    value_out[t * a.value_stride_token + h * a.value_stride_head + d] =
        value_cache[cache_offset(a.value_strides, block, h, offset, d)];
  }
}

template <typename T>
__global__ void reshape_kernel(const CopyParams a, Bug bug) {
  const int64_t t = blockIdx.x;
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0 && bug != Bug::kReshapeSlotMinus1) return;
  int64_t block, offset;
  split_slot(slot, a.block_size, &block, &offset);
  const T* key = static_cast<const T*>(a.key);
  const T* value = static_cast<const T*>(a.value);
  T* key_cache = static_cast<T*>(a.key_cache);
  T* value_cache = static_cast<T*>(a.value_cache);
  const int64_t elements = copied_elements<T>(a, bug);
  for (int64_t e = threadIdx.x; e < elements; e += blockDim.x) {
    const int64_t h = e / a.head_size, d = e % a.head_size;
    key_cache[cache_offset(a.key_strides, block, h, offset, d)] =
        key[t * a.key_stride_token + h * a.key_stride_head + d];
    value_cache[cache_offset(a.value_strides, block, h, offset, d)] =
        value[t * a.value_stride_token + h * a.value_stride_head + d];
  }
}

}  // namespace

const char* launch_planted_gather(const CopyParams& a, Bug bug, void* stream) {
  if (a.num_tokens == 0) return "";
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned grid = static_cast<unsigned>(a.num_tokens);
  switch (a.dtype) {
    case PC_DTYPE_FLOAT32:
      gather_kernel<float><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    case PC_DTYPE_FLOAT16:
      gather_kernel<__half><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    case PC_DTYPE_BFLOAT16:
      gather_kernel<__nv_bfloat16><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    default:
      return "unsupported dtype";
  }
  return cudaGetLastError() == cudaSuccess ? "" : "planted gather kernel launch failed";
}

const char* launch_planted_reshape(const CopyParams& a, Bug bug, void* stream) {
  if (a.num_tokens == 0) return "";
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned grid = static_cast<unsigned>(a.num_tokens);
  switch (a.dtype) {
    case PC_DTYPE_FLOAT32:
      reshape_kernel<float><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    case PC_DTYPE_FLOAT16:
      reshape_kernel<__half><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    case PC_DTYPE_BFLOAT16:
      reshape_kernel<__nv_bfloat16><<<grid, kPlantedThreads, 0, s>>>(a, bug);
      break;
    default:
      return "unsupported dtype";
  }
  return cudaGetLastError() == cudaSuccess ? "" : "planted reshape kernel launch failed";
}

}  // namespace pagecheck::verify::planted
