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

/// The scale of one kv head as the conversions use it. `reciprocal` is RN(1 / scale) and `fast`
/// says that |scale| lies in [2^-32, 2^32], where divide_by_scale needs no IEEE division.
struct Fp8Scale {
  float scale;       ///< the head's scale
  float reciprocal;  ///< __frcp_rn(scale): correctly rounded
  bool fast;         ///< divide_by_scale applies
  bool plain;        ///< finite and non-zero: a product or quotient with a non-NaN value is
                     ///< not NaN (then a chunk without NaN inputs needs no NaN fix-ups)
};

/// value / scale rounded to float32 (round to nearest even), without a division, for a scale
/// with s.fast: q0 = value * RN(1/scale) is within 2 ulps of the quotient; one correction
/// q1 = q0 + (value - scale q0) / scale (the remainder by one fma) is faithful; then Markstein's
/// theorem (reciprocal within half an ulp, quotient within one ulp, remainder exact) makes the
/// second correction the correctly rounded quotient. The bounds on |q0| keep every
/// intermediate normal and every remainder exact. Outside them q0 itself is returned: there
/// |value / scale| < 2^-39 or > 2^39, which every fp8 format rounds to a signed zero or
/// saturates, as it does the exact quotient (same sign); NaN and infinity pass through.
__device__ __forceinline__ float divide_by_scale(float value, const Fp8Scale& s) {
  const float q0 = __fmul_rn(value, s.reciprocal);
  const float q1 = __fmaf_rn(__fmaf_rn(-s.scale, q0, value), s.reciprocal, q0);
  const float q2 = __fmaf_rn(__fmaf_rn(-s.scale, q1, value), s.reciprocal, q1);
  const float m = fabsf(q0);
  return m >= 0x1p-40f && m <= 0x1p40f ? q2 : q0;
}

/// The fp8 code of the float32 quotient q: round to nearest even with saturation to the largest
/// finite value (__NV_SATFINITE also maps +-infinity to +-largest finite). NaN gives 0x7f in
/// both formats, as in the reference (the sign and code of the hardware's NaN result are not
/// the reference's).
__device__ __forceinline__ uint8_t fp8_code(float q, bool e5m2) {
  if (isnan(q)) return 0x7f;
  return static_cast<uint8_t>(
      __nv_cvt_float_to_fp8(q, __NV_SATFINITE, e5m2 ? __NV_E5M2 : __NV_E4M3));
}

/// Cache element -> token element: raw bits, or float32(code) * scale rounded once to T.
template <typename Codec>
__device__ __forceinline__ typename Codec::TokenElem to_token(typename Codec::CacheElem c,
                                                              const Fp8Scale& s, bool e5m2) {
  if constexpr (Codec::kConverts) {
    return float_to_token<typename Codec::Token>(__fmul_rn(fp8_to_float(c, e5m2), s.scale));
  } else {
    return c;
  }
}

/// Token element -> cache element: raw bits, or quantize_fp8(float32(value) / scale) by an
/// IEEE division (the scalar kernels; the vectorized ones use quantize_chunk).
template <typename Codec>
__device__ __forceinline__ typename Codec::CacheElem to_cache(typename Codec::TokenElem t,
                                                              const Fp8Scale& s, bool e5m2) {
  if constexpr (Codec::kConverts) {
    return fp8_code(__fdiv_rn(token_to_float<typename Codec::Token>(t), s.scale), e5m2);
  } else {
    return t;
  }
}

/// The scale of kv head `head` (per tensor: entry 0); 1 for raw copies (never read). The
/// vectorized kernels issue it with their first loads and build the Fp8Scale later.
template <typename Codec>
__device__ __forceinline__ float load_scale(const float* scales, int32_t per_head, int head) {
  if constexpr (Codec::kConverts) {
    return __ldg(scales + (per_head ? head : 0));
  } else {
    return 1.0f;
  }
}

/// The Fp8Scale of a loaded scale.
__device__ __forceinline__ Fp8Scale fp8_scale(float scale) {
  Fp8Scale s;
  s.scale = scale;
  const float m = fabsf(scale);
  s.fast = m >= 0x1p-32f && m <= 0x1p32f;
  s.plain = m > 0.0f && m <= 0x1.fffffep127f;
  s.reciprocal = s.fast ? __frcp_rn(scale) : 1.0f;
  return s;
}

}  // namespace pagecheck::kernels::copy_detail
