#pragma once
/// v3_gqa's tensor-core partition kernel (docs/kernels.md, "v3_gqa"), for float16 / bfloat16
/// queries T on a cache of T or of fp8 codes (KV = uint8_t, e4m3 or e5m2 by p.kv_dtype, exact
/// in T) whose K tensor has 16-byte vectors along the dims and whose V tensor has them along
/// the dims or the slots. One block of GqaTcTraits::kWarps warps per (kv head, row chunk of
/// ROWS = 8 or 16 rows) x sequence x partition; rows as in gqa_kernel.cuh (row v = i * group +
/// j). The products are computed transposed, so that each 8-row tile of a chunk (a group of 8,
/// or q_len x a smaller group) is the mma's N = 8 and keys and dims its M = 16:
/// S^T = K Q^T and O^T = V^T P^T. No warp computes another's logits (below head 192), no half
/// of a 16-row Q tile is padding for 8 rows, and with 16 rows each K and V fragment serves both
/// tiles.
/// Per stage of 64 keys, in a pipeline of kStages stages of cp.async copies:
///  1. K ([key][dim], or [vector][key] for x-split) and V ([key][dim] or [dim][key]) copied
///     into shared memory (gqa_tc_stage.cuh; the block-table entries of a stage are loaded one
///     stage ahead); keys outside the block's attended span are zero-filled and never read
///     (nor their entries);
///  2. warp w takes keys 16 (w % 4)..+15: S^T = K Q^T by mma.sync m16n8k16 (K the A operand,
///     Q's B fragments kept in registers for the whole partition; float32 accumulators);
///  3. scale (times k_scale), soft-cap, ALiBi, masks; online softmax per row in float32 (each
///     warp its own running max and sum), in log2 units so that each exponential is one exp2;
///  4. P^T rounded to the query dtype (the one declared rounding) and turned into the B
///     fragments of O^T += V^T P^T by movmatrix; V's A fragments by ldmatrix.
/// fp8 stages are converted to T as the fragments are read (k_scale joins the logit scale,
/// v_scale the output).
/// Finally the warps' (max, sum, O) are merged in shared memory and written by write_row, a
/// row per warp at a time.
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

/// A fragment of S^T = K Q^T for keys key0..key0+15 (the rows) and dims d0..d0+15 (d0 a
/// multiple of 16) of a K stage laid out as `ks` (KeyStage): a0 = (key g, dims c2..), a1 = (key
/// g + 8, dims c2..), a2 = (key g, dims c2 + 8..), a3 = (key g + 8, dims c2 + 8..). In either
/// stage layout the 16 bytes an ldmatrix row address names are 8 dims of one key.
template <class T, class KV>
__device__ __forceinline__ void key_fragment(uint32_t (&a)[4], const KV* kt, KeyStage ks, int key0,
                                             int d0, int lane, bool e5m2) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(KV));
  if constexpr (sizeof(KV) == 2) {
    // Matrix j of the ldmatrix: keys key0 + 8 (j % 2).., dims d0 + 8 (j / 2)...
    const int d = d0 + 8 * (lane / 16);
    ldmatrix_x4(a, kt + (key0 + lane % 8 + 8 * ((lane / 8) % 2)) * ks.key + d / kVec * ks.vector);
  } else {  // dims d0.. lie in one 16-byte vector
    const uint8_t* row = kt + (key0 + lane / 4) * ks.key + d0 / kVec * ks.vector + 2 * (lane % 4);
    a[0] = fp8x2_as<T>(lds16(row), e5m2);
    a[1] = fp8x2_as<T>(lds16(row + 8 * ks.key), e5m2);
    a[2] = fp8x2_as<T>(lds16(row + 8), e5m2);
    a[3] = fp8x2_as<T>(lds16(row + 8 * ks.key + 8), e5m2);
  }
}

/// A fragment of O^T = V^T P^T for dims d0..d0+15 (the rows) and keys key0..key0+15: a0 = (dim
/// g, keys c2..), a1 = (dim g + 8, keys c2..), a2 = (dim g, keys c2 + 8..), a3 = (dim g + 8, keys
/// c2 + 8..). V_SLOTS: the stage is [dim][key] (SLOT_STRIDE), else [key][dim] (ROW_STRIDE).
template <class T, class KV, bool V_SLOTS, int ROW_STRIDE, int SLOT_STRIDE>
__device__ __forceinline__ void value_fragment(uint32_t (&a)[4], const KV* vt, int key0, int d0,
                                               int lane, bool e5m2) {
  if constexpr (sizeof(KV) == 2) {
    if constexpr (V_SLOTS) {
      // Matrix j: dims d0 + 8 (j % 2).., keys key0 + 8 (j / 2)...
      ldmatrix_x4(
          a, vt + (d0 + lane % 8 + 8 * ((lane / 8) % 2)) * SLOT_STRIDE + key0 + 8 * (lane / 16));
    } else {
      // Matrix j (transposed): keys key0 + 8 (j / 2).., dims d0 + 8 (j % 2)...
      ldmatrix_x4_trans(
          a, vt + (key0 + lane % 8 + 8 * (lane / 16)) * ROW_STRIDE + d0 + 8 * ((lane / 8) % 2));
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
        a[h + 2 * k] = fp8x2_as<T>(two, e5m2);
      }
    }
  }
}

/// O^T += V^T P^T over one stage for this warp's 16 keys (P^T of row tile n as the B fragment
/// {pb[n][0], pb[n][1]}) and its NM 16-dim m-tiles from dim0: each V fragment serves every tile.
template <int HEAD, class T, class KV, bool V_SLOTS, int NR, int NM>
__device__ __forceinline__ void accumulate_values(float (&o)[NR][NM][4],
                                                  const uint32_t (&pb)[NR][2], const KV* vt,
                                                  int key0, int dim0, int lane, bool e5m2) {
  using Tr = GqaTcTraits<HEAD, sizeof(KV)>;
  static_assert(NM * 16 == Tr::kDimsPerWarp, "the warp's m-tiles");
#pragma unroll
  for (int m = 0; m < NM; ++m) {
    uint32_t a[4];
    value_fragment<T, KV, V_SLOTS, Tr::kRowStride, Tr::kSlotStride>(a, vt, key0, dim0 + m * 16,
                                                                    lane, e5m2);
#pragma unroll
    for (int n = 0; n < NR; ++n) mma_16816<T>(o[n][m], a, pb[n][0], pb[n][1]);
  }
}

template <int HEAD, int ROWS, class T, class KV>
__global__ void __launch_bounds__(GqaTcTraits<HEAD, sizeof(KV), ROWS>::kThreads,
                                  GqaTcTraits<HEAD, sizeof(KV), ROWS>::kMinBlocksPerSm)
    gqa_tc_partition_kernel(const __grid_constant__ GqaParams p) {
  using Tr = GqaTcTraits<HEAD, sizeof(KV), ROWS>;
  constexpr int kTile = Tr::kTile, kStages = Tr::kStages, kQs = Tr::kQueryStride;
  constexpr int kNr = Tr::kRowTiles;          // 8-row tiles of the block's rows
  constexpr int kNm = Tr::kDimsPerWarp / 16;  // 16-dim m-tiles of this warp's part of O^T
  constexpr int kKs = HEAD / 16;              // 16-dim k-steps of S^T
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

  // This warp's query rows (rows warp, warp + kWarps, ...; past the chunk: 0): a row's place
  // and kQPerLane elements a lane. Where they take at most kEarlyQRegisters registers (and the
  // warps do not split the dims: head sizes above 128 hold the most registers) they are
  // loaded here, so that their round trip overlaps the table entries and the first stages (ncu,
  // gqa_b32_c128: a tenth of the stall samples waited on these loads when they were issued at
  // t == 0, after the first copies); else at t == 0 (head 256, 8 registers early: ptxas
  // spilled 12 bytes).
  constexpr int kQRowsPerWarp = (Tr::kRows + Tr::kWarps - 1) / Tr::kWarps;
  constexpr int kQPerLane = (HEAD + 31) / 32;
  constexpr int kEarlyQRegisters = 8;
  constexpr bool kEarlyQ = kQRowsPerWarp * kQPerLane <= kEarlyQRegisters && Tr::kDimSplit == 1;
  T q_regs[kQRowsPerWarp][kQPerLane];
  if constexpr (kEarlyQ) {
#pragma unroll
    for (int k = 0; k < kQRowsPerWarp; ++k) {
      const int r = warp + k * Tr::kWarps;
      const T* q_row = nullptr;
      if (r < Tr::kRows && r < s.nrows) {
        const RowInfo row = row_info(p, s, kv_head, r);
        q_row = static_cast<const T*>(p.query) + row.qrow * p.query_stride_token +
                row.head * p.query_stride_head;
      }
#pragma unroll
      for (int j = 0; j < kQPerLane; ++j) {
        const int d = lane + 32 * j;
        q_regs[k][j] = q_row != nullptr && d < HEAD ? q_row[d] : T(0.f);
      }
    }
  }

  const int32_t* table_row = p.block_table + seq * p.block_table_stride;
  // Opaque to the optimizer, so that each entry's address is one multiply-add on this pointer
  // rather than the row's offset recomputed per entry.
  asm("" : "+l"(table_row));
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

  // This thread's two rows of each row tile n (columns of S^T and O^T): 8 n + c2 + {0, 1}.
  int row_lo[kNr][2], row_hi[kNr][2], row_pos[kNr][2];
  float row_slope[kNr][2], m_run[kNr][2], l_run[kNr][2];
#pragma unroll
  for (int n = 0; n < kNr; ++n) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = 8 * n + c2 + i;
      row_lo[n][i] = row_hi[n][i] = row_pos[n][i] = 0;
      row_slope[n][i] = 0.f;
      if (r < s.nrows) {
        const RowInfo row = row_info(p, s, kv_head, r);
        row_lo[n][i] = max(row.lo, span_lo);
        row_hi[n][i] = min(row.hi, span_hi);
        row_pos[n][i] = row.pos;
        if (p.alibi_slopes != nullptr) row_slope[n][i] = p.alibi_slopes[row.head] * kLog2e;
      }
      m_run[n][i] = -INFINITY;
      l_run[n][i] = 0.f;
    }
  }
  // O^T of row tile n: m-tile m holds dims dim0 + 16 m + g (e = 0, 1) and + 8 (e = 2, 3), rows
  // 8 n + c2 + e % 2.
  float o[kNr][kNm][4];
#pragma unroll
  for (int n = 0; n < kNr; ++n) {
#pragma unroll
    for (int m = 0; m < kNm; ++m) {
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][m][e] = 0.f;
    }
  }
  // Q's B fragments of every row tile and k-step (dims c2.. and c2 + 8.. of row 8 n + g), read
  // once stage 0 has landed (the Q tile is written while the first stages are in flight).
  uint32_t qf[kNr][kKs][2];

  // One copy site: iterations t < 0 only fill the first kStages - 1 stages; iteration t >= 0
  // waits for stage t, issues stage t + kStages - 1 and computes stage t.
  // Warp w: keys 16 (w % 4) .. of every stage; O dims dim0 .. dim0 + kDimsPerWarp. The warps of
  // a key group (head sizes above 128) compute the same logits and softmax (bit-identical), each
  // its part of O^T.
  // K copied slots fastest into [vector][key] where consecutive slots of K are consecutive
  // vectors (x-split; gqa_tc_stage.cuh), else dims fastest into [key][dim].
  const ThreadItems items = thread_items<HEAD, KV>(p.key.slot == Tr::kVector);
  const ChunkOffsets fixed{off->key_vec[items.chunk], off->value_vec[items.chunk]};
  // Table entries of stage tn, loaded while the stage before it computes.
  StageEntries<HEAD, KV> next;
  const bool pow2 = p.block_shift >= 0;
  auto load_next = [&](int tn) {
    const int tile0 = tile_begin + tn * kTile;
    auto load = [&](auto pow2_tag, auto interior_tag) {
      load_entries<HEAD, KV, decltype(pow2_tag)::value, decltype(interior_tag)::value>(
          next, p, table_row, tile0, span_lo, span_hi, items, v_slots);
    };
    const bool interior = interior_stage(tile0, kTile, span_lo, span_hi);
    if (pow2) {
      interior ? load(std::true_type{}, std::true_type{})
               : load(std::true_type{}, std::false_type{});
    } else {
      interior ? load(std::false_type{}, std::true_type{})
               : load(std::false_type{}, std::false_type{});
    }
  };
  load_next(0);
  const int key_group = warp % Tr::kKeyGroups;
  const int key0 = key_group * Tr::kKeysPerWarp;
  const int dim0 = (warp / Tr::kKeyGroups) * Tr::kDimsPerWarp;
#pragma unroll 1
  for (int t = 1 - kStages; t < ntiles; ++t) {
    if (t == 0) {
      // The query rows (loaded in the prologue where kEarlyQ), into the Q tile while the first
      // stages are in flight.
      if constexpr (kEarlyQ) {
#pragma unroll
        for (int k = 0; k < kQRowsPerWarp; ++k) {
          const int r = warp + k * Tr::kWarps;
#pragma unroll
          for (int j = 0; j < kQPerLane; ++j) {
            const int d = lane + 32 * j;
            if (r < Tr::kRows && d < HEAD) q_s[r * kQs + d] = q_regs[k][j];
          }
        }
      } else {  // a row per warp at a time, each element stored as it arrives
        for (int r = warp; r < Tr::kRows; r += Tr::kWarps) {
          const T* q_row = nullptr;
          if (r < s.nrows) {
            const RowInfo row = row_info(p, s, kv_head, r);
            q_row = static_cast<const T*>(p.query) + row.qrow * p.query_stride_token +
                    row.head * p.query_stride_head;
          }
          for (int d = lane; d < HEAD; d += 32)
            q_s[r * kQs + d] = q_row != nullptr ? q_row[d] : T(0.f);
        }
      }
    }
    if (t >= 0) {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // stage t is visible; every warp is done with stage t - 1
    }
    if (t == 0) {
#pragma unroll
      for (int n = 0; n < kNr; ++n) {
#pragma unroll
        for (int ks = 0; ks < kKs; ++ks) {
          const T* const q_row = q_s + (8 * n + g) * kQs + ks * 16 + c2;
          qf[n][ks][0] = *reinterpret_cast<const uint32_t*>(q_row);
          qf[n][ks][1] = *reinterpret_cast<const uint32_t*>(q_row + 8);
        }
      }
    }
    const int tn = t + kStages - 1;
    if (tn < ntiles) {
      const int tile0n = tile_begin + tn * kTile;
      if (interior_stage(tile0n, kTile, span_lo, span_hi)) {
        issue_stage<HEAD, KV, true>(next, p, k_head, v_head, *off, fixed, tile0n, span_lo, span_hi,
                                    items, v_slots, k_stage(tn % kStages), v_stage(tn % kStages));
      } else {
        issue_stage<HEAD, KV, false>(next, p, k_head, v_head, *off, fixed, tile0n, span_lo, span_hi,
                                     items, v_slots, k_stage(tn % kStages), v_stage(tn % kStages));
      }
      if (tn + 1 < ntiles) load_next(tn + 1);
    }
    cp_async_commit();
    if (t < 0) continue;
    const KV* const kt = k_stage(t % kStages);
    const KV* const vt = v_stage(t % kStages);
    const int tile0 = tile_begin + t * kTile;

    // 2. S^T = K Q^T over this warp's 16 keys, each K fragment for every row tile; two
    // accumulators a tile (even and odd k-steps) halve the chain of dependent mma.
    float sc[kNr][4], sd[kNr][4];
#pragma unroll
    for (int n = 0; n < kNr; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) sc[n][e] = sd[n][e] = 0.f;
    }
#pragma unroll
    for (int ks = 0; ks < kKs; ++ks) {
      uint32_t a[4];
      key_fragment<T, KV>(a, kt, items.k_order, key0, ks * 16, lane, e5m2);
#pragma unroll
      for (int n = 0; n < kNr; ++n)
        mma_16816<T>(ks % 2 == 0 ? sc[n] : sd[n], a, qf[n][ks][0], qf[n][ks][1]);
    }

    // 3. Logits and the online softmax: sc[n][e] is key g + 8 (e / 2) of row 8 n + c2 + e % 2.
    bool rescale = false;
    float alpha[kNr][2];
#pragma unroll
    for (int n = 0; n < kNr; ++n) {
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e % 2;
        const int tok = tile0 + key0 + g + 8 * (e / 2);
        float x = pre * (sc[n][e] + sd[n][e]);
        if (capped) x = cap2 * tanhf(x);
        x = fmaf(row_slope[n][i], static_cast<float>(tok - row_pos[n][i]), x);
        sc[n][e] = tok >= row_lo[n][i] && tok < row_hi[n][i] ? x : -INFINITY;
        mx[i] = fmaxf(mx[i], sc[n][e]);
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // the max over the warp's 16 keys (lanes g = 0..7)
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 4));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 8));
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 16));
        const float m_new = fmaxf(m_run[n][i], mx[i]);
        const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no key yet: weights stay 0
        alpha[n][i] = exp2f(m_run[n][i] - m_use);
        rescale |= alpha[n][i] != 1.f;
        m_run[n][i] = m_new;
        mx[i] = m_use;
        l_run[n][i] *= alpha[n][i];
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e % 2;
        const float w = exp2f(sc[n][e] - mx[i]);  // masked keys: exp2(-inf) = 0
        sc[n][e] = w;
        l_run[n][i] += w;
      }
    }
    if (__any_sync(0xffffffffu, rescale)) {  // a new max
#pragma unroll
      for (int n = 0; n < kNr; ++n) {
#pragma unroll
        for (int m = 0; m < kNm; ++m) {
          o[n][m][0] *= alpha[n][0];
          o[n][m][1] *= alpha[n][1];
          o[n][m][2] *= alpha[n][0];
          o[n][m][3] *= alpha[n][1];
        }
      }
    }

    // 4. O^T += V^T P^T. P^T's fragment of keys g (rows c2, c2 + 1) transposed by movmatrix is
    // the B fragment (keys c2, c2 + 1 of row g) of keys 0-7; likewise keys 8-15.
    uint32_t pb[kNr][2];
#pragma unroll
    for (int n = 0; n < kNr; ++n) {
      pb[n][0] = movmatrix_trans(pack2<T>(sc[n][0], sc[n][1]));
      pb[n][1] = movmatrix_trans(pack2<T>(sc[n][2], sc[n][3]));
    }
    if (v_slots) {
      accumulate_values<HEAD, T, KV, true>(o, pb, vt, key0, dim0, lane, e5m2);
    } else {
      accumulate_values<HEAD, T, KV, false>(o, pb, vt, key0, dim0, lane, e5m2);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // Q and the stages become the merge space

  constexpr int kGroups = Tr::kKeyGroups;
  float* const red = reinterpret_cast<float*>(tc_smem);  // [kKeyGroups][kRows][HEAD]
  float* const m_s = red + kGroups * Tr::kRows * HEAD;
  float* const l_s = m_s + kGroups * Tr::kRows;
#pragma unroll
  for (int n = 0; n < kNr; ++n) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // the sum of a row over the warp's 16 keys (lanes g = 0..7)
      l_run[n][i] += __shfl_xor_sync(0xffffffffu, l_run[n][i], 4);
      l_run[n][i] += __shfl_xor_sync(0xffffffffu, l_run[n][i], 8);
      l_run[n][i] += __shfl_xor_sync(0xffffffffu, l_run[n][i], 16);
    }
#pragma unroll
    for (int m = 0; m < kNm; ++m) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        red[(key_group * Tr::kRows + 8 * n + c2 + e % 2) * HEAD + dim0 + 16 * m + g + 8 * (e / 2)] =
            o[n][m][e];
      }
    }
    if (g == 0 && dim0 == 0) {  // the warps of a key group hold the same max and sum
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        m_s[key_group * Tr::kRows + 8 * n + c2 + i] = m_run[n][i];
        l_s[key_group * Tr::kRows + 8 * n + c2 + i] = l_run[n][i];
      }
    }
  }
  __syncthreads();
  // Each warp finishes rows warp, warp + kWarps, ... (its lanes the dims): the rows' merges and
  // stores run side by side, not one row after another for the whole block.
  for (int r = warp; r < s.nrows; r += Tr::kWarps) {
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
        lane, 32);
  }
}

}  // namespace pagecheck::kernels::gqa
