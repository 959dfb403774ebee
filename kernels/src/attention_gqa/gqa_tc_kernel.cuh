#pragma once
/// v3_gqa's tensor-core partition kernel (docs/kernels.md, "v3_gqa"), for float16 / bfloat16
/// queries T on a cache of T or of fp8 codes (KV = uint8_t, e4m3 or e5m2 by p.kv_dtype, exact
/// in T) whose K tensor has 16-byte vectors along the dims and whose V tensor has them along
/// the dims or the slots. One block of GqaTcTraits::kWarps warps per (kv head, row chunk of 16
/// rows) x sequence x partition; rows as in gqa_kernel.cuh (row v = i * group + j).
/// Per stage of 64 keys, in a pipeline of kStages stages of cp.async copies:
///  1. K ([key][dim], or [vector][key] for x-split) and V ([key][dim] or [dim][key]) copied
///     into shared memory (gqa_tc_stage.cuh; the block-table entries of a stage are loaded one
///     stage ahead); keys outside the block's attended span are zero-filled and never read
///     (nor their entries);
///  2. warp w takes keys 16w..16w+15: S = Q K^T by mma.sync m16n8k16 (float32 accumulators);
///  3. scale (times k_scale), soft-cap, ALiBi, masks; online softmax per row in float32 (each
///     warp its own running max and sum), in log2 units so that each exponential is one exp2;
///  4. O += P V by mma.sync, P rounded to the query dtype (the one declared rounding).
/// fp8 stages are converted to T as the fragments are read (k_scale joins the logit scale,
/// v_scale the output).
/// Finally the warps' (max, sum, O) are merged in shared memory and written by write_row.
/// Fragment layouts: PTX ISA, mma.m16n8k16 (row g = lane / 4, column pair 2 (lane % 4)).
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "attention_gqa/gqa_common.cuh"
#include "attention_gqa/gqa_mma.cuh"
#include "attention_gqa/gqa_tc_stage.cuh"
#include "attention_gqa/gqa_tc_traits.h"

namespace pagecheck::kernels::gqa {

/// Two fp8 codes (low byte first) as two T in one register, exactly (every e4m3 / e5m2 value
/// is a float16 and a bfloat16 value).
template <class T>
__device__ __forceinline__ uint32_t fp8x2_as(uint32_t two, bool e5m2) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two & 0xffffu),
                                                   e5m2 ? __NV_E5M2 : __NV_E4M3);
  if constexpr (std::is_same_v<T, __half>) {
    return uint32_t{h.x} | (uint32_t{h.y} << 16);
  } else {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
    return pack2<T>(f.x, f.y);
  }
}
/// The 16 bits at shared address `p` (2-byte aligned).
__device__ __forceinline__ uint32_t lds16(const uint8_t* p) {
  return *reinterpret_cast<const uint16_t*>(p);
}

/// B fragments of Q K^T for keys key0..key0+15 and dims d0..d0+15 (d0 a multiple of 16) of a
/// K stage laid out as `ks` (KeyStage): {b0, b1} of n-tile 0 (keys key0..) and {b2, b3} of
/// n-tile 1 (keys key0 + 8..). In either layout the 16 bytes an ldmatrix row address names
/// are 8 dims of one key.
template <class T, class KV>
__device__ __forceinline__ void key_fragments(uint32_t (&b)[4], const KV* kt, KeyStage ks, int key0,
                                              int d0, int lane, bool e5m2) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(KV));
  if constexpr (sizeof(KV) == 2) {
    const int d = d0 + 8 * ((lane / 8) % 2);
    ldmatrix_x4(b, kt + (key0 + lane % 8 + 8 * (lane / 16)) * ks.key + d / kVec * ks.vector);
  } else {  // dims d0.. lie in one 16-byte vector
    const uint8_t* row = kt + (key0 + lane / 4) * ks.key + d0 / kVec * ks.vector + 2 * (lane % 4);
    b[0] = fp8x2_as<T>(lds16(row), e5m2);
    b[1] = fp8x2_as<T>(lds16(row + 8), e5m2);
    b[2] = fp8x2_as<T>(lds16(row + 8 * ks.key), e5m2);
    b[3] = fp8x2_as<T>(lds16(row + 8 * ks.key + 8), e5m2);
  }
}

/// B fragments of P V for keys key0..key0+15 and dims d0..d0+15: {b0, b1} of dims d0.., {b2,
/// b3} of dims d0 + 8... V_SLOTS: the stage is [dim][key] (SLOT_STRIDE), else [key][dim].
template <class T, class KV, bool V_SLOTS, int ROW_STRIDE, int SLOT_STRIDE>
__device__ __forceinline__ void value_fragments(uint32_t (&b)[4], const KV* vt, int key0, int d0,
                                                int lane, bool e5m2) {
  if constexpr (sizeof(KV) == 2) {
    if constexpr (V_SLOTS) {
      ldmatrix_x4(
          b, vt + (d0 + lane % 8 + 8 * (lane / 16)) * SLOT_STRIDE + key0 + 8 * ((lane / 8) % 2));
    } else {
      ldmatrix_x4_trans(
          b, vt + (key0 + lane % 8 + 8 * ((lane / 8) % 2)) * ROW_STRIDE + d0 + 8 * (lane / 16));
    }
  } else {
    const int dim = d0 + lane / 4, key = key0 + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // dims d0.. and d0 + 8..
      const int dd = dim + 8 * h;
#pragma unroll
      for (int k = 0; k < 2; ++k) {  // keys key.. and key + 8..
        uint32_t two;
        if constexpr (V_SLOTS) {
          two = lds16(vt + dd * SLOT_STRIDE + key + 8 * k);
        } else {
          two = uint32_t{vt[(key + 8 * k) * ROW_STRIDE + dd]} |
                (uint32_t{vt[(key + 8 * k + 1) * ROW_STRIDE + dd]} << 8);
        }
        b[2 * h + k] = fp8x2_as<T>(two, e5m2);
      }
    }
  }
}

/// O += P V over one stage for this warp's 16 keys (P as the A fragment `pa`) and its NT
/// 8-dim n-tiles from dim0.
template <int HEAD, class T, class KV, bool V_SLOTS, int NT>
__device__ __forceinline__ void accumulate_values(float (&o)[NT][4], const uint32_t (&pa)[4],
                                                  const KV* vt, int key0, int dim0, int lane,
                                                  bool e5m2) {
  using Tr = GqaTcTraits<HEAD, sizeof(KV)>;
  static_assert(NT * 8 == Tr::kDimsPerWarp, "the warp's n-tiles");
#pragma unroll
  for (int dp = 0; dp < NT / 2; ++dp) {
    uint32_t b[4];
    value_fragments<T, KV, V_SLOTS, Tr::kRowStride, Tr::kSlotStride>(b, vt, key0, dim0 + dp * 16,
                                                                     lane, e5m2);
    mma_16816<T>(o[2 * dp], pa, b[0], b[1]);
    mma_16816<T>(o[2 * dp + 1], pa, b[2], b[3]);
  }
}

template <int HEAD, class T, class KV>
__global__ void __launch_bounds__(GqaTcTraits<HEAD, sizeof(KV)>::kThreads,
                                  GqaTcTraits<HEAD, sizeof(KV)>::kMinBlocksPerSm)
    gqa_tc_partition_kernel(const __grid_constant__ GqaParams p) {
  using Tr = GqaTcTraits<HEAD, sizeof(KV)>;
  constexpr int kTile = Tr::kTile, kStages = Tr::kStages, kQs = Tr::kQueryStride;
  constexpr int kNt = Tr::kDimsPerWarp / 8;  // 8-dim n-tiles of this warp's part of O
  extern __shared__ __align__(16) unsigned char tc_smem[];
  T* const q_s = reinterpret_cast<T*>(tc_smem);
  unsigned char* const stages = tc_smem + Tr::kQueryBytes;

  launch_dependents();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, c2 = 2 * (lane % 4);
  const bool e5m2 = p.kv_dtype == PC_DTYPE_FP8_E5M2;

  BlockSpan span;
  if (!partition_block<HEAD>(p, Tr::kRows, Tr::kThreads, span)) return;
  const SeqInfo s = span.s;
  const int kv_head = span.kv_head;
  const int64_t seq = span.seq;
  const int part = span.part, span_lo = span.span_lo, span_hi = span.span_hi;
  const int part_lo = part * p.partition_size;

  const int32_t* table_row = p.block_table + seq * p.block_table_stride;
  const bool v_slots = p.value.mode == kGqaLoadSlotVector;
  auto* const off =
      reinterpret_cast<StageOffsets<HEAD, sizeof(KV)>*>(stages + kStages * Tr::kStageBytes);
  for (int j = tid; j < HEAD / Tr::kVector; j += Tr::kThreads) {
    off->key_vec[j] = static_cast<int32_t>(dim_offset(p.key, j * Tr::kVector, HEAD));
    off->value_vec[j] = static_cast<int32_t>(dim_offset(p.value, j * Tr::kVector, HEAD));
  }
  for (int d = tid; d < HEAD; d += Tr::kThreads) {
    off->value_dim[d] = static_cast<int32_t>(dim_offset(p.value, d, HEAD));
  }
  const KV* const k_head = reinterpret_cast<const KV*>(p.key.base) + kv_head * p.key.head;
  const KV* const v_head = reinterpret_cast<const KV*>(p.value.base) + kv_head * p.value.head;
  __syncthreads();
  const int tile_begin = part_lo + (span_lo - part_lo) / kTile * kTile;
  const int ntiles = (span_hi - tile_begin + kTile - 1) / kTile;
  auto k_stage = [&](int st) { return reinterpret_cast<KV*>(stages + st * Tr::kStageBytes); };
  auto v_stage = [&](int st) {
    return reinterpret_cast<KV*>(stages + st * Tr::kStageBytes + Tr::kKeyBytes);
  };
  const float k_scale = p.key.scale != nullptr ? p.key.scale[p.scale_per_head ? kv_head : 0] : 1.f;
  const float v_scale =
      p.value.scale != nullptr ? p.value.scale[p.scale_per_head ? kv_head : 0] : 1.f;
  // Logits are kept in log2 units (x log2(e)), so every exponential is one exp2; the max and
  // sum written for the merge are converted back (m ln 2).
  constexpr float kLog2e = 1.4426950408889634f;
  const bool capped = p.soft_cap > 0.f;
  const float qk_scale = p.scale * k_scale;
  const float pre = capped ? qk_scale / p.soft_cap : qk_scale * kLog2e;  // times S
  const float cap2 = p.soft_cap * kLog2e;                                // times tanh

  // This thread's two rows of every fragment: g and g + 8.
  int row_lo[2], row_hi[2], row_pos[2];
  float row_slope[2], m_run[2], l_run[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = g + 8 * i;
    row_lo[i] = row_hi[i] = row_pos[i] = 0;
    row_slope[i] = 0.f;
    if (r < s.nrows) {
      const RowInfo row = row_info(p, s, kv_head, r);
      row_lo[i] = max(row.lo, span_lo);
      row_hi[i] = min(row.hi, span_hi);
      row_pos[i] = row.pos;
      if (p.alibi_slopes != nullptr) row_slope[i] = p.alibi_slopes[row.head] * kLog2e;
    }
    m_run[i] = -INFINITY;
    l_run[i] = 0.f;
  }
  float o[kNt][4];
#pragma unroll
  for (int n = 0; n < kNt; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) o[n][e] = 0.f;
  }

  // One copy site: iterations t < 0 only fill the first kStages - 1 stages; iteration t >= 0
  // waits for stage t, issues stage t + kStages - 1 and computes stage t.
  // Warp w: keys 16 (w % 4) .. of every stage; O dims dim0 .. dim0 + kDimsPerWarp. The warps of
  // a key group compute the same logits and softmax (bit-identical), each its half of P V.
  // K copied slots fastest into [vector][key] where consecutive slots of K are consecutive
  // vectors (x-split; gqa_tc_stage.cuh), else dims fastest into [key][dim].
  const ThreadItems items = thread_items<HEAD, KV>(p.key.slot == Tr::kVector);
  const ChunkOffsets fixed{off->key_vec[items.chunk], off->value_vec[items.chunk]};
  // Table entries of stage tn, loaded while the stage before it computes.
  StageEntries<HEAD, KV> next;
  const bool pow2 = p.block_shift >= 0;
  auto load_next = [&](int tn) {
    if (pow2) {
      load_entries<HEAD, KV, true>(next, p, table_row, tile_begin + tn * kTile, span_lo, span_hi,
                                   items, v_slots);
    } else {
      load_entries<HEAD, KV, false>(next, p, table_row, tile_begin + tn * kTile, span_lo, span_hi,
                                    items, v_slots);
    }
  };
  load_next(0);
  const int key_group = warp % Tr::kKeyGroups;
  const int key0 = key_group * Tr::kKeysPerWarp;
  const int dim0 = (warp / Tr::kKeyGroups) * Tr::kDimsPerWarp;
#pragma unroll 1
  for (int t = 1 - kStages; t < ntiles; ++t) {
    if (t == 0) {
      // Query rows (rows past the chunk: 0), while the first stages are in flight.
      for (int idx = tid; idx < Tr::kRows * HEAD; idx += Tr::kThreads) {
        const int r = idx / HEAD, d = idx - (idx / HEAD) * HEAD;
        T q = T(0.f);
        if (r < s.nrows) {
          const RowInfo row = row_info(p, s, kv_head, r);
          q = static_cast<const T*>(
              p.query)[row.qrow * p.query_stride_token + row.head * p.query_stride_head + d];
        }
        q_s[r * kQs + d] = q;
      }
    }
    if (t >= 0) {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // stage t is visible; every warp is done with stage t - 1
    }
    const int tn = t + kStages - 1;
    if (tn < ntiles) {
      issue_stage<HEAD, KV>(next, p, k_head, v_head, *off, fixed, tile_begin + tn * kTile, span_lo,
                            span_hi, items, v_slots, k_stage(tn % kStages), v_stage(tn % kStages));
      if (tn + 1 < ntiles) load_next(tn + 1);
    }
    cp_async_commit();
    if (t < 0) continue;
    const KV* const kt = k_stage(t % kStages);
    const KV* const vt = v_stage(t % kStages);
    const int tile0 = tile_begin + t * kTile;

    // 2. S = Q K^T over this warp's 16 keys: two 8-key n-tiles.
    float sc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
    for (int ks = 0; ks < HEAD / 16; ++ks) {
      uint32_t a[4], b[4];
      ldmatrix_x4(a, q_s + (lane % 8 + 8 * ((lane / 8) % 2)) * kQs + ks * 16 + 8 * (lane / 16));
      key_fragments<T, KV>(b, kt, items.k_order, key0, ks * 16, lane, e5m2);
      mma_16816<T>(sc[0], a, b[0], b[1]);
      mma_16816<T>(sc[1], a, b[2], b[3]);
    }

    // 3. Logits and the online softmax of rows g (e = 0, 1) and g + 8 (e = 2, 3).
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e / 2;
        const int tok = tile0 + key0 + 8 * n + c2 + (e % 2);
        float x = pre * sc[n][e];
        if (capped) x = cap2 * tanhf(x);
        x = fmaf(row_slope[i], static_cast<float>(tok - row_pos[i]), x);
        sc[n][e] = tok >= row_lo[i] && tok < row_hi[i] ? x : -INFINITY;
        mx[i] = fmaxf(mx[i], sc[n][e]);
      }
    }
    float alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      const float m_new = fmaxf(m_run[i], mx[i]);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no key yet: weights stay 0
      alpha[i] = exp2f(m_run[i] - m_use);
      m_run[i] = m_new;
      mx[i] = m_use;
      l_run[i] *= alpha[i];
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e / 2;
        const float w = exp2f(sc[n][e] - mx[i]);  // masked keys: exp2(-inf) = 0
        sc[n][e] = w;
        l_run[i] += w;
      }
    }
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {  // a new max
#pragma unroll
      for (int n = 0; n < kNt; ++n) {
        o[n][0] *= alpha[0];
        o[n][1] *= alpha[0];
        o[n][2] *= alpha[1];
        o[n][3] *= alpha[1];
      }
    }

    // 4. O += P V: P as the A fragment of one k16 step (keys 0-7 from n-tile 0, 8-15 from 1).
    const uint32_t pa[4] = {pack2<T>(sc[0][0], sc[0][1]), pack2<T>(sc[0][2], sc[0][3]),
                            pack2<T>(sc[1][0], sc[1][1]), pack2<T>(sc[1][2], sc[1][3])};
    if (v_slots) {
      accumulate_values<HEAD, T, KV, true>(o, pa, vt, key0, dim0, lane, e5m2);
    } else {
      accumulate_values<HEAD, T, KV, false>(o, pa, vt, key0, dim0, lane, e5m2);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // Q and the stages become the merge space

  constexpr int kGroups = Tr::kKeyGroups;
  float* const red = reinterpret_cast<float*>(tc_smem);  // [kKeyGroups][kRows][HEAD]
  float* const m_s = red + kGroups * Tr::kRows * HEAD;
  float* const l_s = m_s + kGroups * Tr::kRows;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l_run[i] += __shfl_xor_sync(0xffffffffu, l_run[i], 1);
    l_run[i] += __shfl_xor_sync(0xffffffffu, l_run[i], 2);
  }
#pragma unroll
  for (int n = 0; n < kNt; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      red[(key_group * Tr::kRows + g + 8 * (e / 2)) * HEAD + dim0 + 8 * n + c2 + (e % 2)] = o[n][e];
    }
  }
  if (lane % 4 == 0 && dim0 == 0) {  // the warps of a key group hold the same max and sum
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      m_s[key_group * Tr::kRows + g + 8 * i] = m_run[i];
      l_s[key_group * Tr::kRows + g + 8 * i] = l_run[i];
    }
  }
  __syncthreads();
  for (int r = 0; r < s.nrows; ++r) {
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < kGroups; ++w) m = fmaxf(m, m_s[w * Tr::kRows + r]);
    float f[kGroups];
    float l = 0.f;
#pragma unroll
    for (int w = 0; w < kGroups; ++w) {
      const float mw = m_s[w * Tr::kRows + r];
      f[w] = mw == -INFINITY ? 0.f : exp2f(mw - m);
      l += f[w] * l_s[w * Tr::kRows + r];
      f[w] *= v_scale;
    }
    constexpr float kLn2 = 0.6931471805599453f;
    write_row<HEAD>(
        p, row_info(p, s, kv_head, r), part, m * kLn2, l,
        [&](int d) {
          float acc = 0.f;
#pragma unroll
          for (int w = 0; w < kGroups; ++w) {
            acc = fmaf(f[w], red[(w * Tr::kRows + r) * HEAD + d], acc);
          }
          return acc;
        },
        Tr::kThreads);
  }
}

}  // namespace pagecheck::kernels::gqa
