#pragma once
/// Device helpers of the planted kernels (internal): typed loads/stores, offsets, reductions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/vec.cuh"
#include "planted_kernels.h"

namespace pagecheck::verify::planted {

__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

using kernels::from_float;  // round to nearest even, shared with the kernels

template <typename T>
__device__ __forceinline__ float load(const void* base, int64_t index) {
  return to_float(static_cast<const T*>(base)[index]);
}

/// Element offset of element (block, head, slot, dim) of a cache tensor with strides `s`
/// (64-bit; the ABI's formula, pagecheck/plugin.h).
__device__ __forceinline__ int64_t cache_offset(const CacheStrides& s, int64_t block, int64_t head,
                                                int64_t slot, int64_t dim) {
  return block * s.block + head * s.head + slot * s.slot + (dim / s.dim_split) * s.group +
         (dim % s.dim_split) * s.dim;
}

/// The planted 32-bit variants: the same sums wrapped to 32 bits (as int arithmetic would).
__device__ __forceinline__ int64_t wrap32(int64_t offset) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(offset)));
}

/// Block-wide max or sum of one float per thread (blockDim.x a multiple of 32, <= 1024).
/// `scratch` holds 32 floats of shared memory; every thread gets the result.
__device__ __forceinline__ float block_reduce(float v, bool is_max, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? scratch[lane] : (is_max ? -INFINITY : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  const float result = scratch[0];
  __syncthreads();  // scratch may be reused right away
  return result;
}

}  // namespace pagecheck::verify::planted
