#pragma once
/// Chunk conversions of the vectorized copy kernels: a 16-byte chunk of cache elements to or
/// from its token elements (copy_codec.cuh's to_token / to_cache on every element), fp8 codes
/// converted in pairs, and without the per-element NaN fix-ups where the scale is finite and
/// non-zero and the chunk holds no NaN (then no product or quotient is NaN). Bit for bit the
/// element rules.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "copy/copy_codec.cuh"

namespace pagecheck::kernels::copy_detail {

/// Two fp8 codes (lo in the low byte) of format F decoded exactly, by one paired conversion.
template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ float2 fp8_pair_to_float(uint8_t lo, uint8_t hi) {
  const __half2_raw h =
      __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(lo | (uint32_t{hi} << 8)), F);
  return make_float2(__half2float(__half(__half_raw{h.x})), __half2float(__half(__half_raw{h.y})));
}

/// fp8_code of two quotients by one paired conversion (the same rounding, lane by lane).
template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ void fp8_pair_codes(float lo, float hi, uint8_t& code_lo,
                                               uint8_t& code_hi) {
  const __nv_fp8x2_storage_t two = __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, F);
  code_lo = isnan(lo) ? uint8_t{0x7f} : static_cast<uint8_t>(two & 0xffu);
  code_hi = isnan(hi) ? uint8_t{0x7f} : static_cast<uint8_t>(two >> 8);
}

/// True when no code of the chunk is a NaN of format F (E4M3: |code| = 0x7f; E5M2: |code| >
/// 0x7c), four codes per 32-bit word: adding 1 (3) to each 7-bit magnitude sets its bit 7
/// exactly for the NaN codes, without carries between bytes.
template <int N, __nv_fp8_interpretation_t F>
__device__ __forceinline__ bool fp8_chunk_has_no_nan(const Chunk<uint8_t, N>& in) {
  constexpr uint32_t kBias = F == __NV_E4M3 ? 0x01010101u : 0x03030303u;
  uint32_t any = 0;
#pragma unroll
  for (int i = 0; i < N / 4; ++i) {
    const uint32_t w = reinterpret_cast<const uint32_t*>(in.e)[i];
    any |= (w & 0x7f7f7f7fu) + kBias;
  }
  return (any & 0x80808080u) == 0;
}

/// Two float32 values rounded once to T and packed (lo in the low half) by one paired
/// conversion, or the float32 pair itself; no NaN fix-up (the callers know there is no NaN).
template <typename T>
__device__ __forceinline__ void pack_token_pair(float lo, float hi,
                                                typename Element<sizeof(T)>::type* out) {
  if constexpr (std::is_same_v<T, float>) {
    out[0] = __float_as_uint(lo);
    out[1] = __float_as_uint(hi);
  } else if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    *reinterpret_cast<uint32_t*>(out) = *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    *reinterpret_cast<uint32_t*>(out) = *reinterpret_cast<const uint32_t*>(&h);
  }
}

/// Dequantizes a chunk of format F: to_token on each element, codes decoded in pairs. Where the
/// scale is finite and non-zero and no code is NaN no product is NaN: the pairs are rounded
/// and packed by one conversion each, without the per-element NaN fix-up.
template <typename Codec, int N, __nv_fp8_interpretation_t F>
__device__ __forceinline__ void dequantize_chunk(const Chunk<uint8_t, N>& in,
                                                 Chunk<typename Codec::TokenElem, N>& out,
                                                 const Fp8Scale& s) {
  using T = typename Codec::Token;
  const float scale = s.scale;
  if (s.plain && fp8_chunk_has_no_nan<N, F>(in)) {
#pragma unroll
    for (int j = 0; j < N; j += 2) {
      const __half2_raw h =
          __nv_cvt_fp8x2_to_halfraw2(reinterpret_cast<const __nv_fp8x2_storage_t*>(in.e)[j / 2], F);
      const float2 code = __half22float2(*reinterpret_cast<const __half2*>(&h));
      pack_token_pair<T>(__fmul_rn(code.x, scale), __fmul_rn(code.y, scale), &out.e[j]);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < N; j += 2) {
    const float2 code = fp8_pair_to_float<F>(in.e[j], in.e[j + 1]);
    out.e[j] = float_to_token<T>(__fmul_rn(code.x, scale));
    out.e[j + 1] = float_to_token<T>(__fmul_rn(code.y, scale));
  }
}

/// The fp8 codes of format F of N quotients, rounded in pairs.
template <int N, __nv_fp8_interpretation_t F>
__device__ __forceinline__ void fp8_chunk_codes(const float (&q)[N], Chunk<uint8_t, N>& out) {
#pragma unroll
  for (int j = 0; j < N; j += 2) fp8_pair_codes<F>(q[j], q[j + 1], out.e[j], out.e[j + 1]);
}

/// True when no token element of the chunk is NaN, a 32-bit word at a time: adding the largest
/// mantissa (0x3ff float16, 0x7f bfloat16, 0x7fffff float32) to each magnitude carries into its
/// sign bit exactly when the magnitude exceeds infinity's, without carries between the elements
/// of a word.
template <typename T, int N>
__device__ __forceinline__ bool token_chunk_has_no_nan(
    const Chunk<typename Element<sizeof(T)>::type, N>& in) {
  constexpr uint32_t kMagnitude =
      std::is_same_v<T, float> ? 0x7fffffffu : 0x7fff7fffu;  // per element: all but the sign
  constexpr uint32_t kBias = std::is_same_v<T, float>    ? 0x007fffffu
                             : std::is_same_v<T, __half> ? 0x03ff03ffu
                                                         : 0x007f007fu;
  uint32_t any = 0;
#pragma unroll
  for (int i = 0; i < Chunk<typename Element<sizeof(T)>::type, N>::kVectors * 4; ++i) {
    const uint32_t w = reinterpret_cast<const uint32_t*>(in.v)[i];
    any |= (w & kMagnitude) + kBias;
  }
  return (any & ~kMagnitude) == 0;
}

/// The fp8 codes of format F of N quotients none of which is NaN, by paired conversions.
template <int N, __nv_fp8_interpretation_t F>
__device__ __forceinline__ void fp8_chunk_codes_no_nan(const float (&q)[N],
                                                       Chunk<uint8_t, N>& out) {
#pragma unroll
  for (int j = 0; j < N; j += 2) {
    reinterpret_cast<__nv_fp8x2_storage_t*>(out.e)[j / 2] =
        __nv_cvt_float2_to_fp8x2(make_float2(q[j], q[j + 1]), __NV_SATFINITE, F);
  }
}

/// Quantizes a chunk: to_cache on each element, the quotients by divide_by_scale where s.fast
/// (one branch per chunk, so that the elements' conversions interleave), the codes in pairs.
/// Where the scale is finite and non-zero and no input is NaN no quotient is NaN: the codes
/// need no NaN fix-up.
template <typename Codec, int N>
__device__ __forceinline__ void quantize_chunk(const Chunk<typename Codec::TokenElem, N>& in,
                                               Chunk<uint8_t, N>& out, const Fp8Scale& s,
                                               bool e5m2) {
  using T = typename Codec::Token;
  float q[N];
  const bool no_nan = s.plain && token_chunk_has_no_nan<T, N>(in);
  if (s.fast) {
#pragma unroll
    for (int j = 0; j < N; ++j) q[j] = divide_by_scale(token_to_float<T>(in.e[j]), s);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) q[j] = __fdiv_rn(token_to_float<T>(in.e[j]), s.scale);
  }
  if (no_nan) {
    if (e5m2) {
      fp8_chunk_codes_no_nan<N, __NV_E5M2>(q, out);
    } else {
      fp8_chunk_codes_no_nan<N, __NV_E4M3>(q, out);
    }
  } else if (e5m2) {
    fp8_chunk_codes<N, __NV_E5M2>(q, out);
  } else {
    fp8_chunk_codes<N, __NV_E4M3>(q, out);
  }
}

/// A cache chunk as token elements (to_token on each; the fp8 format chosen once per chunk).
template <typename Codec, int N>
__device__ __forceinline__ void chunk_to_tokens(const Chunk<typename Codec::CacheElem, N>& in,
                                                Chunk<typename Codec::TokenElem, N>& out,
                                                const Fp8Scale& s, bool e5m2) {
  if constexpr (Codec::kConverts) {
    if (e5m2) {
      dequantize_chunk<Codec, N, __NV_E5M2>(in, out, s);
    } else {
      dequantize_chunk<Codec, N, __NV_E4M3>(in, out, s);
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out.e[j] = in.e[j];
  }
}

/// A token chunk as cache elements (to_cache on each; the fp8 format chosen once per chunk).
template <typename Codec, int N>
__device__ __forceinline__ void chunk_to_cache(const Chunk<typename Codec::TokenElem, N>& in,
                                               Chunk<typename Codec::CacheElem, N>& out,
                                               const Fp8Scale& s, bool e5m2) {
  if constexpr (Codec::kConverts) {
    quantize_chunk<Codec, N>(in, out, s, e5m2);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out.e[j] = in.e[j];
  }
}

}  // namespace pagecheck::kernels::copy_detail
