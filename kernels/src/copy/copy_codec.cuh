#pragma once
/// Element conversions of the copy kernels, one "codec" per pair (token dtype, cache dtype):
///   RawCodec<E>  the two sides share a dtype of E bytes: raw bits (NaN payloads included);
///   Fp8Codec<T>  token dtype T (float, __half, __nv_bfloat16), fp8 cache (E4M3 or E5M2, chosen
///                at run time): the rule of docs/dtypes.md, bit for bit with the reference.
/// Storage travels as raw unsigned integers; a chunk is the 16 bytes of cache elements one
/// vectorized item moves (16 / cache bytes dims).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace pagecheck::kernels::copy_detail {

/// Raw storage element of E bytes.
template <int E>
struct Element;
template <>
struct Element<1> {
  using type = uint8_t;
};
template <>
struct Element<2> {
  using type = uint16_t;
};
template <>
struct Element<4> {
  using type = uint32_t;
};

/// N elements of Elem viewed as 16-byte vectors (N * sizeof(Elem) a multiple of 16).
template <typename Elem, int N>
struct Chunk {
  static_assert(N * sizeof(Elem) % 16 == 0, "a chunk is whole 16-byte vectors");
  static constexpr int kVectors = static_cast<int>(N * sizeof(Elem) / 16);
  union {
    uint4 v[kVectors];  ///< the vectors, lowest address first
    Elem e[N];          ///< the elements
  };
};

/// Both sides share a dtype of E bytes: the kernels copy bits.
template <int E>
struct RawCodec {
  static constexpr int kCacheBytes = E;
  static constexpr int kTokenBytes = E;
  static constexpr bool kConverts = false;
  using CacheElem = typename Element<E>::type;
  using TokenElem = CacheElem;
};

/// Token dtype T, fp8 cache: quantize on reshape, dequantize on gather.
template <typename T>
struct Fp8Codec {
  static constexpr int kCacheBytes = 1;
  static constexpr int kTokenBytes = static_cast<int>(sizeof(T));
  static constexpr bool kConverts = true;
  using CacheElem = uint8_t;
  using TokenElem = typename Element<kTokenBytes>::type;
  using Token = T;
};

/// Dims of one chunk: 16 bytes of cache elements.
template <typename Codec>
inline constexpr int kChunkDims = 16 / Codec::kCacheBytes;

/// The token value as float (exact for all three token dtypes).
template <typename T>
__device__ __forceinline__ float token_to_float(typename Element<sizeof(T)>::type bits) {
  if constexpr (std::is_same_v<T, float>) {
    return __uint_as_float(bits);
  } else if constexpr (std::is_same_v<T, __half>) {
    return __half2float(__ushort_as_half(bits));
  } else {
    return __uint_as_float(uint32_t{bits} << 16);  // bfloat16 is the top half of a float
  }
}

/// float -> T, round to nearest even; every NaN becomes the reference's NaN (x86 and Eigen give
/// the positive quiet NaN with an empty payload: 0x7fc00000, 0x7e00, 0x7fc0), since the CUDA
/// conversions and arithmetic produce 0x7fffffff / 0x7fff instead.
template <typename T>
__device__ __forceinline__ typename Element<sizeof(T)>::type float_to_token(float v) {
  const bool nan = isnan(v);
  if constexpr (std::is_same_v<T, float>) {
    return nan ? 0x7fc00000u : __float_as_uint(v);
  } else if constexpr (std::is_same_v<T, __half>) {
    return nan ? uint16_t{0x7e00} : __half_as_ushort(__float2half_rn(v));
  } else {
    return nan ? uint16_t{0x7fc0} : __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
}

/// The fp8 code as float, exact (both formats fit in float16, which fits in float).
__device__ __forceinline__ float fp8_to_float(uint8_t code, bool e5m2) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(code, e5m2 ? __NV_E5M2 : __NV_E4M3);
  return __half2float(__half(h));
}

/// quantize_fp8(value / scale): the quotient in float32 (IEEE division, not a reciprocal),
/// then round to nearest even with saturation to the largest finite value (__NV_SATFINITE also
/// maps +-infinity to +-largest finite). NaN gives 0x7f in both formats, as in the reference
/// (handled here: the sign and code of the hardware's NaN result are not the reference's).
__device__ __forceinline__ uint8_t quantize_fp8(float value, float scale, bool e5m2) {
  const float q = __fdiv_rn(value, scale);
  if (isnan(q)) return 0x7f;
  return static_cast<uint8_t>(
      __nv_cvt_float_to_fp8(q, __NV_SATFINITE, e5m2 ? __NV_E5M2 : __NV_E4M3));
}

/// Cache element -> token element: raw bits, or float32(code) * scale rounded once to T.
template <typename Codec>
__device__ __forceinline__ typename Codec::TokenElem to_token(typename Codec::CacheElem c,
                                                              float scale, bool e5m2) {
  if constexpr (Codec::kConverts) {
    return float_to_token<typename Codec::Token>(__fmul_rn(fp8_to_float(c, e5m2), scale));
  } else {
    return c;
  }
}

/// Token element -> cache element: raw bits, or quantize_fp8(float32(value) / scale).
template <typename Codec>
__device__ __forceinline__ typename Codec::CacheElem to_cache(typename Codec::TokenElem t,
                                                              float scale, bool e5m2) {
  if constexpr (Codec::kConverts) {
    return quantize_fp8(token_to_float<typename Codec::Token>(t), scale, e5m2);
  } else {
    return t;
  }
}

/// The scale of kv head `head` (per tensor: entry 0); 1 for raw copies (never read).
template <typename Codec>
__device__ __forceinline__ float scale_of(const float* scales, int32_t per_head, int head) {
  if constexpr (Codec::kConverts) {
    return __ldg(scales + (per_head ? head : 0));
  } else {
    return 1.0f;
  }
}

}  // namespace pagecheck::kernels::copy_detail
