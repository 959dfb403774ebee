#pragma once
/// v3_gqa's tile loader: reads kTile tokens x HEAD dims of one cache tensor (any strides, any
/// KV dtype) into a float shared-memory tile [kTile][HEAD + 4], dequantizing fp8 codes
/// (code * scale in float32). Tokens outside [valid_lo, valid_hi) are never read and become 0.
/// The caller has put each token's element offset (block, kv head and slot terms) into
/// `token_off`; nothing past the valid range of a block-table row is ever dereferenced.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "attention_gqa/gqa_params.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels::gqa {

/// 16-byte read-only load.
__device__ __forceinline__ uint4 ldg16(const char* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

/// Two fp8 codes (low byte first) to floats, exactly (through float16, which holds every
/// e4m3 and e5m2 value).
__device__ __forceinline__ float2 fp8x2_to_float2(uint32_t two, bool e5m2) {
  const __nv_fp8x2_storage_t s = static_cast<__nv_fp8x2_storage_t>(two & 0xffffu);
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(s, e5m2 ? __NV_E5M2 : __NV_E4M3);
  return __half22float2(*reinterpret_cast<const __half2*>(&h));
}

/// One element of a tensor of dtype `kv` at byte address `p` as float (times `scale` for fp8).
__device__ __forceinline__ float load_element(const char* p, int32_t kv, float scale) {
  switch (kv) {
    case PC_DTYPE_FLOAT32:
      return __ldg(reinterpret_cast<const float*>(p));
    case PC_DTYPE_FLOAT16:
      return __half2float(__ldg(reinterpret_cast<const __half*>(p)));
    case PC_DTYPE_BFLOAT16:
      return __bfloat162float(__ldg(reinterpret_cast<const __nv_bfloat16*>(p)));
    case PC_DTYPE_FP8_E4M3:
    case PC_DTYPE_FP8_E5M2: {
      const uint32_t code = __ldg(reinterpret_cast<const unsigned char*>(p));
      return fp8x2_to_float2(code, kv == PC_DTYPE_FP8_E5M2).x * scale;
    }
  }
  return 0.f;
}

/// The 16 bytes `raw` as VE floats (VE = 16 / element bytes) of dtype `kv`.
template <int VE>
__device__ __forceinline__ void convert16(const uint4& raw, int32_t kv, float scale,
                                          float (&out)[VE]) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
  if constexpr (VE == 4) {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = __uint_as_float(w[i]);
  } else if constexpr (VE == 8) {
    if (kv == PC_DTYPE_BFLOAT16) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        out[2 * i] = __uint_as_float(w[i] << 16);
        out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
      }
    }
  } else {
    static_assert(VE == 16, "16-byte vectors hold 4, 8 or 16 elements");
    const bool e5m2 = kv == PC_DTYPE_FP8_E5M2;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 lo = fp8x2_to_float2(w[i], e5m2);
      const float2 hi = fp8x2_to_float2(w[i] >> 16, e5m2);
      out[4 * i] = lo.x * scale;
      out[4 * i + 1] = lo.y * scale;
      out[4 * i + 2] = hi.x * scale;
      out[4 * i + 3] = hi.y * scale;
    }
  }
}

/// Element offset of dim `d` inside a token (the group and dim terms of the stride formula).
__device__ __forceinline__ int64_t dim_offset(const GqaTensor& t, int d, int head_size) {
  if (t.dim_split >= head_size) return int64_t{d} * t.dim;
  return int64_t{d / t.dim_split} * t.group + int64_t{d % t.dim_split} * t.dim;
}

/// Fills tile[kTile][STRIDE] from tensor `t` (element size EB bytes, dtype `kv`).
template <int HEAD, int TILE, int STRIDE, int THREADS, int EB>
__device__ __forceinline__ void load_tile_vec(const GqaTensor& t, int32_t kv, float scale,
                                              const int64_t* token_off, int valid_lo, int valid_hi,
                                              float* tile) {
  constexpr int VE = 16 / EB;
  if (t.mode == kGqaLoadDimVector) {
    // Item (token, chunk), chunk fastest: consecutive lanes read consecutive 16 bytes of a
    // token's dims; each lane stores its VE floats as float4s, rotated so that the 8 lanes of
    // a shared-memory phase write 8 distinct 16-byte bank groups.
    if constexpr (HEAD % VE != 0) {
      return;  // never selected: the host picks kGqaLoadScalar when VE does not divide HEAD
    }
    constexpr int kChunks = HEAD / VE;
    constexpr int kItems = TILE * kChunks;
    constexpr int kBatch = HEAD <= 128 ? 8 : 4;  // loads in flight per thread (registers)
    constexpr int kPerThread = (kItems + THREADS - 1) / THREADS;
#pragma unroll 1
    for (int b0 = 0; b0 < kPerThread; b0 += kBatch) {
      uint4 raw[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int item = (b0 + b) * THREADS + static_cast<int>(threadIdx.x);
        raw[b] = make_uint4(0, 0, 0, 0);
        if (b0 + b < kPerThread && item < kItems) {
          const int tok = item / kChunks, c = item % kChunks;
          if (tok >= valid_lo && tok < valid_hi) {
            const int64_t off = token_off[tok] + dim_offset(t, c * VE, HEAD);
            raw[b] = ldg16(t.base + off * EB);
          }
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int item = (b0 + b) * THREADS + static_cast<int>(threadIdx.x);
        if (b0 + b < kPerThread && item < kItems) {
          const int tok = item / kChunks, c = item % kChunks;
          float f[VE];
          convert16<VE>(raw[b], kv, scale, f);
          constexpr int kQuads = VE / 4;
          const int rot = (c * kQuads / 8) % kQuads;
          float* dst = tile + tok * STRIDE + c * VE;
#pragma unroll
          for (int j = 0; j < kQuads; ++j) {
            const int q = (j + rot) % kQuads;
            float4 v;
            // Select quad q of f without dynamic register indexing.
            v = make_float4(f[0], f[1], f[2], f[3]);
#pragma unroll
            for (int k = 1; k < kQuads; ++k) {
              if (q == k) v = make_float4(f[4 * k], f[4 * k + 1], f[4 * k + 2], f[4 * k + 3]);
            }
            *reinterpret_cast<float4*>(dst + 4 * q) = v;
          }
        }
      }
    }
  } else {
    // kGqaLoadSlotVector. Item (slot vector, dim), dim fastest: a lane reads VE consecutive
    // slots of one dim (one cache block: block_size and the tile start are multiples of VE)
    // and stores them down a column of the tile; a vector only partly inside the valid range
    // is read element by element.
    constexpr int kVectors = TILE / VE;
    constexpr int kItems = kVectors * HEAD;
    constexpr int kBatch = 4;
    constexpr int kPerThread = (kItems + THREADS - 1) / THREADS;
    static_assert(TILE % VE == 0, "slot vectors tile the tile");
    // A batch's whole vectors are all in flight before the first is converted (batches in a
    // loop: unrolling them all spills registers).
#pragma unroll 1
    for (int b0 = 0; b0 < kPerThread; b0 += kBatch) {
      uint4 raw[kBatch];
      bool whole[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int item = (b0 + b) * THREADS + static_cast<int>(threadIdx.x);
        raw[b] = make_uint4(0, 0, 0, 0);
        whole[b] = false;
        if (b0 + b < kPerThread && item < kItems) {
          const int tok0 = item / HEAD * VE, d = item % HEAD;
          whole[b] = tok0 >= valid_lo && tok0 + VE <= valid_hi;
          if (whole[b]) raw[b] = ldg16(t.base + (token_off[tok0] + dim_offset(t, d, HEAD)) * EB);
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int item = (b0 + b) * THREADS + static_cast<int>(threadIdx.x);
        if (b0 + b < kPerThread && item < kItems) {
          const int tok0 = item / HEAD * VE, d = item % HEAD;
          float f[VE];
          if (whole[b]) {
            convert16<VE>(raw[b], kv, scale, f);
          } else {
            const int64_t doff = dim_offset(t, d, HEAD);
#pragma unroll
            for (int j = 0; j < VE; ++j) {
              const int tok = tok0 + j;
              f[j] = (tok >= valid_lo && tok < valid_hi)
                         ? load_element(t.base + (token_off[tok] + doff) * EB, kv, scale)
                         : 0.f;
            }
          }
#pragma unroll
          for (int j = 0; j < VE; ++j) tile[(tok0 + j) * STRIDE + d] = f[j];
        }
      }
    }
  }
}

/// Element-by-element fallback for any strides.
template <int HEAD, int TILE, int STRIDE, int THREADS>
__device__ __forceinline__ void load_tile_scalar(const GqaTensor& t, int32_t kv, int eb,
                                                 float scale, const int64_t* token_off,
                                                 int valid_lo, int valid_hi, float* tile) {
  constexpr int kItems = TILE * HEAD;
#pragma unroll 4
  for (int item = threadIdx.x; item < kItems; item += THREADS) {
    const int tok = item / HEAD, d = item % HEAD;
    float v = 0.f;
    if (tok >= valid_lo && tok < valid_hi) {
      v = load_element(t.base + (token_off[tok] + dim_offset(t, d, HEAD)) * eb, kv, scale);
    }
    tile[tok * STRIDE + d] = v;
  }
}

/// Loads one tile of tensor `t` whatever its dtype and mode.
template <int HEAD, int TILE, int STRIDE, int THREADS>
__device__ __forceinline__ void load_tile(const GqaTensor& t, int32_t kv, float scale,
                                          const int64_t* token_off, int valid_lo, int valid_hi,
                                          float* tile) {
  const int eb = kv == PC_DTYPE_FLOAT32                                ? 4
                 : (kv == PC_DTYPE_FLOAT16 || kv == PC_DTYPE_BFLOAT16) ? 2
                                                                       : 1;
  if (t.mode == kGqaLoadScalar) {
    load_tile_scalar<HEAD, TILE, STRIDE, THREADS>(t, kv, eb, scale, token_off, valid_lo, valid_hi,
                                                  tile);
  } else if (eb == 4) {
    load_tile_vec<HEAD, TILE, STRIDE, THREADS, 4>(t, kv, scale, token_off, valid_lo, valid_hi,
                                                  tile);
  } else if (eb == 2) {
    load_tile_vec<HEAD, TILE, STRIDE, THREADS, 2>(t, kv, scale, token_off, valid_lo, valid_hi,
                                                  tile);
  } else {
    load_tile_vec<HEAD, TILE, STRIDE, THREADS, 1>(t, kv, scale, token_off, valid_lo, valid_hi,
                                                  tile);
  }
}

}  // namespace pagecheck::kernels::gqa
