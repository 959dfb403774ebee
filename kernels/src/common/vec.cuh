#pragma once
/// Device helpers shared by the kernels: 16-byte vector loads, conversions of 16-byte vectors of
/// float / __half / __nv_bfloat16 to float, warp reductions. All arithmetic is float32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace pagecheck::kernels {

/// Compile-time helpers usable in traits.
__host__ __device__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
__host__ __device__ constexpr int min_int(int a, int b) {
  return a < b ? a : b;
}
__host__ __device__ constexpr int max_int(int a, int b) {
  return a > b ? a : b;
}
/// Smallest power of two >= n (n >= 1).
__host__ __device__ constexpr int pow2_ceil(int n) {
  return n <= 1 ? 1 : 2 * pow2_ceil((n + 1) / 2);
}
/// Largest power of two <= n (n >= 1).
__host__ __device__ constexpr int pow2_floor(int n) {
  return n < 2 ? 1 : 2 * pow2_floor(n / 2);
}

/// Elements of T per 16-byte vector (the key cache's x).
template <typename T>
inline constexpr int kVecElems = 16 / static_cast<int>(sizeof(T));

/// 16-byte read-only load (ld.global.nc.v4). `p` must be 16-byte aligned.
__device__ __forceinline__ uint4 load16(const void* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

/// Converts element j of a 16-byte vector of T to float.
template <typename T>
__device__ __forceinline__ void vec_to_float(const uint4& v, float (&out)[kVecElems<T>]);

template <>
__device__ __forceinline__ void vec_to_float<float>(const uint4& v, float (&out)[4]) {
  out[0] = __uint_as_float(v.x);
  out[1] = __uint_as_float(v.y);
  out[2] = __uint_as_float(v.z);
  out[3] = __uint_as_float(v.w);
}

template <>
__device__ __forceinline__ void vec_to_float<__half>(const uint4& v, float (&out)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

template <>
__device__ __forceinline__ void vec_to_float<__nv_bfloat16>(const uint4& v, float (&out)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // bfloat16 is the upper half of a float32: the conversion is exact.
    out[2 * i] = __uint_as_float(w[i] << 16);
    out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

/// float32 dot product of two 16-byte vectors of T.
template <typename T>
__device__ __forceinline__ float dot16(const uint4& a, const uint4& b) {
  float fa[kVecElems<T>];
  float fb[kVecElems<T>];
  vec_to_float<T>(a, fa);
  vec_to_float<T>(b, fb);
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < kVecElems<T>; ++i) acc = fmaf(fa[i], fb[i], acc);
  return acc;
}

/// Loads one element of T (any alignment of T) and converts it to float.
template <typename T>
__device__ __forceinline__ float load_float(const T* p);
template <>
__device__ __forceinline__ float load_float<float>(const float* p) {
  return __ldg(p);
}
template <>
__device__ __forceinline__ float load_float<__half>(const __half* p) {
  return __half2float(__ldg(p));
}
template <>
__device__ __forceinline__ float load_float<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(__ldg(p));
}

/// Rounds a float to T (round to nearest even).
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// Sum over the lanes of groups of GROUP consecutive lanes (GROUP a power of two <= 32); every
/// lane of the warp must call it.
template <int GROUP>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int mask = GROUP / 2; mask >= 1; mask /= 2) v += __shfl_xor_sync(0xffffffffu, v, mask);
  return v;
}

/// Max over the 32 lanes of a warp.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int mask = 16; mask >= 1; mask /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, mask));
  return v;
}

/// Block-wide max of NUM_WARPS warps through `scratch` (NUM_WARPS floats, used by this call
/// only); contains a __syncthreads(); every thread gets the result.
template <int NUM_WARPS>
__device__ __forceinline__ float block_max(float v, float* scratch) {
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
#pragma unroll
  for (int w = 1; w < NUM_WARPS; ++w) r = fmaxf(r, scratch[w]);
  return r;
}

/// Block-wide sum, like block_max.
template <int NUM_WARPS>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  v = group_sum<32>(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.f;
#pragma unroll
  for (int w = 0; w < NUM_WARPS; ++w) r += scratch[w];
  return r;
}

}  // namespace pagecheck::kernels
