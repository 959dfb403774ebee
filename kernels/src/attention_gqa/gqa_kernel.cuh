#pragma once
/// v3_gqa device code (docs/kernels.md, "v3_gqa"). One thread block of 128 threads per
/// (kv head, row chunk) x sequence x partition computes up to ROWS query rows of the kv head's
/// group (row v = i * group + j: new token i, query head j of the group), so every K/V tile is
/// read once for all of them. Per tile of kTile tokens:
///  1. each token's element offset (block table, slot, kv head) into shared memory;
///  2. K and V tiles into shared memory as float (gqa_load.cuh; 0 outside the valid range);
///  3. q.k: warp w takes the float4 dim steps w, w + 4, ...; lane l the tokens l, l + 32;
///     query float4s are warp-uniform shared loads; the 4 warps' partial sums meet in shared
///     memory (over the consumed K tile), summed in a fixed order;
///  4. online softmax, warp w owning rows w, w + 4: scale, soft-cap, ALiBi, masks (causal,
///     window, partition), running max and sum in float32, weights P[t][row] to shared memory;
///  5. P.V: warp w takes a quarter of the tile's tokens, lane l the dims l, l + 32, ...: float32
///     accumulators for every row, rescaled by exp(m_old - m_new) per tile.
/// At the end the 4 warps' accumulators are summed; a row whose attended range lies in one
/// partition is written out (sink joining the denominator); others leave (max, sum, acc) in the
/// workspace for gqa_merge_kernel.
#include <cuda_runtime.h>

#include <cmath>

#include "attention_gqa/gqa_common.cuh"
#include "attention_gqa/gqa_load.cuh"
#include "attention_gqa/gqa_traits.h"

namespace pagecheck::kernels::gqa {

template <int HEAD, int ROWS>
__global__ void __launch_bounds__(GqaTraits<HEAD, ROWS>::kThreads,
                                  GqaTraits<HEAD, ROWS>::kMinBlocksPerSm)
    gqa_partition_kernel(const __grid_constant__ GqaParams p) {
  using Tr = GqaTraits<HEAD, ROWS>;
  constexpr int kTile = Tr::kTile, kStride = Tr::kStride, kWarps = Tr::kWarps;
  constexpr int kTpl = Tr::kTokensPerLane, kDpl = Tr::kDimsPerLane, kRpw = Tr::kRowsPerWarp;
  extern __shared__ __align__(16) float smem[];
  float* const k_tile = smem + Tr::kKeyOffset;
  float* const v_tile = smem + Tr::kValueOffset;
  float* const q_s = smem + Tr::kQueryOffset;
  float* const p_s = smem + Tr::kWeightOffset;  // [kTile][ROWS]
  float* const alpha_s = smem + Tr::kAlphaOffset;
  float* const m_s = smem + Tr::kMaxOffset;
  float* const l_s = smem + Tr::kSumOffset;
  int64_t* const koff = reinterpret_cast<int64_t*>(smem + Tr::kFloats);
  int64_t* const voff = koff + kTile;

  launch_dependents();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  BlockSpan span;
  if (!partition_block<HEAD>(p, ROWS, Tr::kThreads, span)) return;
  const SeqInfo s = span.s;
  const int kv_head = span.kv_head;
  const int64_t seq = span.seq;
  const int part = span.part, span_lo = span.span_lo, span_hi = span.span_hi;
  const int part_lo = part * p.partition_size;

  // Query rows into shared memory as float (rows past the chunk: 0), a row per warp at a time.
  for (int r = warp; r < ROWS; r += kWarps) {
    int64_t q_off = -1;
    if (r < s.nrows) {
      const RowInfo row = row_info(p, s, kv_head, r);
      q_off = row.qrow * p.query_stride_token + row.head * p.query_stride_head;
    }
    for (int d = lane; d < HEAD; d += 32) {
      q_s[r * kStride + d] = q_off >= 0 ? load_io(p.query, q_off + d, p.io_dtype) : 0.f;
    }
  }
  const float k_scale = p.key.scale != nullptr ? p.key.scale[p.scale_per_head ? kv_head : 0] : 1.f;
  const float v_scale =
      p.value.scale != nullptr ? p.value.scale[p.scale_per_head ? kv_head : 0] : 1.f;

  // The rows this warp owns in the softmax: r = rr * kWarps + warp.
  int row_lo[kRpw], row_hi[kRpw], row_pos[kRpw];
  float row_slope[kRpw], m_run[kRpw], l_run[kRpw];
#pragma unroll
  for (int rr = 0; rr < kRpw; ++rr) {
    const int r = rr * kWarps + warp;
    row_lo[rr] = row_hi[rr] = row_pos[rr] = 0;
    row_slope[rr] = 0.f;
    if (r < s.nrows) {
      const RowInfo row = row_info(p, s, kv_head, r);
      row_lo[rr] = row.lo;
      row_hi[rr] = row.hi;
      row_pos[rr] = row.pos;
      if (p.alibi_slopes != nullptr) row_slope[rr] = p.alibi_slopes[row.head];
    }
    m_run[rr] = -INFINITY;
    l_run[rr] = 0.f;
  }
  float acc[ROWS][kDpl];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int k = 0; k < kDpl; ++k) acc[r][k] = 0.f;
  }

  const int32_t* table_row = p.block_table + seq * p.block_table_stride;
  // Tiles are aligned to kTile from the partition start; those wholly before span_lo (a
  // window) are skipped, never read.
  for (int tile0 = part_lo + (span_lo - part_lo) / kTile * kTile; tile0 < span_hi; tile0 += kTile) {
    const int valid_lo = max(span_lo, tile0) - tile0;
    const int valid_hi = min(span_hi, tile0 + kTile) - tile0;
    // 1. Token offsets: only the valid tokens' block-table entries are read.
    if (tid < kTile && tid >= valid_lo && tid < valid_hi) {
      const int tok = tile0 + tid;
      const int blk = tok / p.block_size;
      const int slot = tok - blk * p.block_size;
      const int64_t phys = table_row[blk];
      koff[tid] = phys * p.key.block + kv_head * p.key.head + slot * p.key.slot;
      voff[tid] = phys * p.value.block + kv_head * p.value.head + slot * p.value.slot;
    }
    __syncthreads();
    // 2. K and V tiles.
    load_tile<HEAD, kTile, kStride, Tr::kThreads>(p.key, p.kv_dtype, k_scale, koff, valid_lo,
                                                  valid_hi, k_tile);
    load_tile<HEAD, kTile, kStride, Tr::kThreads>(p.value, p.kv_dtype, v_scale, voff, valid_lo,
                                                  valid_hi, v_tile);
    __syncthreads();

    // 3. Partial dot products over this warp's dim steps.
    float dot[ROWS][kTpl];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
      for (int n = 0; n < kTpl; ++n) dot[r][n] = 0.f;
    }
#pragma unroll 2
    for (int s0 = 0; s0 < Tr::kSteps; s0 += kWarps) {
      const int st = s0 + warp;
      if (Tr::kSteps % kWarps == 0 || st < Tr::kSteps) {
        float4 kv[kTpl];
#pragma unroll
        for (int n = 0; n < kTpl; ++n) {
          kv[n] = *reinterpret_cast<const float4*>(k_tile + (lane + 32 * n) * kStride + 4 * st);
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          const float4 q = *reinterpret_cast<const float4*>(q_s + r * kStride + 4 * st);
#pragma unroll
          for (int n = 0; n < kTpl; ++n) {
            float a = dot[r][n];
            a = fmaf(q.x, kv[n].x, a);
            a = fmaf(q.y, kv[n].y, a);
            a = fmaf(q.z, kv[n].z, a);
            a = fmaf(q.w, kv[n].w, a);
            dot[r][n] = a;
          }
        }
      }
    }
    __syncthreads();  // every warp is done with the K tile: its space takes the partial sums
    float* const partial = k_tile;  // [kWarps][ROWS][kTile]
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
      for (int n = 0; n < kTpl; ++n) partial[(warp * ROWS + r) * kTile + lane + 32 * n] = dot[r][n];
    }
    __syncthreads();

    // 4. Online softmax of the owned rows; order: scale, soft-cap, ALiBi, masks.
#pragma unroll
    for (int rr = 0; rr < kRpw; ++rr) {
      const int r = rr * kWarps + warp;
      float logit[kTpl];
      float tile_max = -INFINITY;
#pragma unroll
      for (int n = 0; n < kTpl; ++n) {
        const int t = lane + 32 * n;
        const int tok = tile0 + t;
        float d = partial[(0 * ROWS + r) * kTile + t];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) d += partial[(w * ROWS + r) * kTile + t];
        float x = p.scale * d;
        if (p.soft_cap > 0.f) x = p.soft_cap * tanhf(x / p.soft_cap);
        x += row_slope[rr] * static_cast<float>(tok - row_pos[rr]);
        const bool ok = t >= valid_lo && t < valid_hi && tok >= row_lo[rr] && tok < row_hi[rr];
        logit[n] = ok ? x : -INFINITY;
        tile_max = fmaxf(tile_max, logit[n]);
      }
      tile_max = warp_max(tile_max);
      const float m_new = fmaxf(m_run[rr], tile_max);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no token yet: weights stay 0
      const float alpha = expf(m_run[rr] - m_use);
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < kTpl; ++n) {
        const float w = logit[n] == -INFINITY ? 0.f : expf(logit[n] - m_use);
        p_s[(lane + 32 * n) * ROWS + r] = w;
        sum += w;
      }
      sum = warp_sum(sum);
      l_run[rr] = l_run[rr] * alpha + sum;
      m_run[rr] = m_new;
      if (lane == 0) alpha_s[r] = alpha;
    }
    __syncthreads();

    // 5. Weighted values of this warp's quarter of the tile.
#pragma unroll
    for (int r0 = 0; r0 < ROWS; r0 += 4) {
      const float4 a = *reinterpret_cast<const float4*>(alpha_s + r0);
      const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int k = 0; k < kDpl; ++k) acc[r0 + j][k] *= av[j];
      }
    }
#pragma unroll 2
    for (int tt = 0; tt < Tr::kTokensPerWarp; ++tt) {
      const int t = warp * Tr::kTokensPerWarp + tt;
      float w[ROWS];
#pragma unroll
      for (int r0 = 0; r0 < ROWS; r0 += 4) {
        const float4 pw = *reinterpret_cast<const float4*>(p_s + t * ROWS + r0);
        w[r0] = pw.x;
        w[r0 + 1] = pw.y;
        w[r0 + 2] = pw.z;
        w[r0 + 3] = pw.w;
      }
      float v[kDpl];
#pragma unroll
      for (int k = 0; k < kDpl; ++k) {
        const int d = lane + 32 * k;
        v[k] = v_tile[t * kStride + (HEAD % 32 == 0 || d < HEAD ? d : HEAD - 1)];
      }
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
#pragma unroll
        for (int k = 0; k < kDpl; ++k) acc[r][k] = fmaf(w[r], v[k], acc[r][k]);
      }
    }
    __syncthreads();  // the next tile overwrites offsets, tiles and weights
  }

  // Sum the warps' accumulators (over the K tile's space) and finish.
  float* const red = k_tile;  // [kWarps][ROWS][HEAD]
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int k = 0; k < kDpl; ++k) {
      const int d = lane + 32 * k;
      if (HEAD % 32 == 0 || d < HEAD) red[(warp * ROWS + r) * HEAD + d] = acc[r][k];
    }
  }
#pragma unroll
  for (int rr = 0; rr < kRpw; ++rr) {
    if (lane == 0) {
      m_s[rr * kWarps + warp] = m_run[rr];
      l_s[rr * kWarps + warp] = l_run[rr];
    }
  }
  __syncthreads();
  for (int r = warp; r < s.nrows; r += kWarps) {  // a row per warp at a time, lanes the dims
    write_row<HEAD>(
        p, row_info(p, s, kv_head, r), part, m_s[r], l_s[r],
        [&](int d) {
          float o = red[(0 * ROWS + r) * HEAD + d];
#pragma unroll
          for (int w = 1; w < kWarps; ++w) o += red[(w * ROWS + r) * HEAD + d];
          return o;
        },
        lane, 32);
  }
}

/// Merges the partitions of every row of a chunk whose range spans more than one partition
/// (the others were written by the partition kernel): global max (the sink included), weights
/// exp(m_j - M), sum of the partitions' sums plus the sink's exp(sink - M).
template <int HEAD>
__global__ void __launch_bounds__(kGqaMergeWarps * 32)
    gqa_merge_kernel(const __grid_constant__ GqaParams p, int rows_per_block) {
  constexpr int kDpl = (HEAD + 31) / 32;
  constexpr int kUnroll = 8;  // partitions whose loads are in flight together
  const int kv_head = blockIdx.x % p.num_kv_heads;
  const int chunk = blockIdx.x / p.num_kv_heads;
  const int64_t seq = blockIdx.y;
  const int lane = threadIdx.x % 32;
  // One warp per row: grid z covers the chunk's rows kGqaMergeWarps at a time.
  const int r = static_cast<int>(blockIdx.z) * kGqaMergeWarps + static_cast<int>(threadIdx.x) / 32;
  const SeqInfo s = seq_info(p, seq, chunk, rows_per_block);
  if (s.nrows <= 0 || s.bad || s.ctx == 0 || r >= s.nrows) return;
  wait_for_primary();
  const RowInfo row = row_info(p, s, kv_head, r);
  const int j_lo = row.lo / p.partition_size;
  const int j_last = (row.hi - 1) / p.partition_size;
  if (j_lo >= j_last) return;
  const int64_t base = (row.qrow * p.num_heads + row.head) * p.max_partitions;
  float m = -INFINITY;
  for (int j = j_lo + lane; j <= j_last; j += 32) m = fmaxf(m, p.ws_max[base + j]);
  m = warp_max(m);
  const float sink = p.sinks != nullptr ? p.sinks[row.head] : -INFINITY;
  if (p.sinks != nullptr) m = fmaxf(m, sink);
  float z = 0.f;
  float o[kDpl];
#pragma unroll
  for (int k = 0; k < kDpl; ++k) o[k] = 0.f;
  // 32 partitions at a time: lane i holds partition j0 + i's weight exp(m_j - M), broadcast to
  // the warp, which adds the partitions' accumulators kUnroll at a time.
  for (int j0 = j_lo; j0 <= j_last; j0 += 32) {
    const int jl = j0 + lane;
    const float mj = jl <= j_last ? p.ws_max[base + jl] : -INFINITY;
    const float wl = mj == -INFINITY ? 0.f : expf(mj - m);
    z += wl == 0.f ? 0.f : p.ws_sum[base + jl] * wl;
    const int n = min(32, j_last - j0 + 1);
    const float* const src = p.ws_out + (base + j0) * HEAD;
    for (int t0 = 0; t0 < n; t0 += kUnroll) {
      float w[kUnroll], x[kUnroll][kDpl];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int t = t0 + u;
        w[u] = __shfl_sync(0xffffffffu, wl, t % 32);
#pragma unroll
        for (int k = 0; k < kDpl; ++k) {
          const int d = lane + 32 * k;
          x[u][k] = t < n && (HEAD % 32 == 0 || d < HEAD) ? src[t * HEAD + d] : 0.f;
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int k = 0; k < kDpl; ++k) o[k] = fmaf(w[u], x[u][k], o[k]);
      }
    }
  }
  z = warp_sum(z);
  if (p.sinks != nullptr) z += expf(sink - m);
  const float inv = 1.f / z;
#pragma unroll
  for (int k = 0; k < kDpl; ++k) {
    const int d = lane + 32 * k;
    if (HEAD % 32 == 0 || d < HEAD) {
      store_io(p.out, row.qrow * p.out_stride_token + row.head * p.out_stride_head + d, p.io_dtype,
               o[k] * inv);
    }
  }
}

}  // namespace pagecheck::kernels::gqa
