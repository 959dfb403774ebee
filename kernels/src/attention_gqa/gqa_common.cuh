#pragma once
/// Device helpers shared by v3_gqa's partition kernels (CUDA-core gqa_kernel.cuh and
/// tensor-core gqa_tc_kernel.cuh) and its merge: programmatic dependent launch, warp
/// reductions, query/output element access, the sequence and row facts of a block, and the
/// factor that turns a row's accumulator into its output.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "attention_gqa/gqa_params.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels::gqa {

/// griddepcontrol.launch_dependents (sm_90): the dependent merge grid may be scheduled now.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/// griddepcontrol.wait: the primary grid has completed and its writes are visible.
__device__ __forceinline__ void wait_for_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

/// One query element of dtype `io` at element offset `off` as float.
__device__ __forceinline__ float load_io(const void* base, int64_t off, int32_t io) {
  switch (io) {
    case PC_DTYPE_FLOAT16:
      return __half2float(__ldg(static_cast<const __half*>(base) + off));
    case PC_DTYPE_BFLOAT16:
      return __bfloat162float(__ldg(static_cast<const __nv_bfloat16*>(base) + off));
    default:
      return __ldg(static_cast<const float*>(base) + off);
  }
}
/// Stores v rounded (to nearest even) to dtype `io` at element offset `off`.
__device__ __forceinline__ void store_io(void* base, int64_t off, int32_t io, float v) {
  switch (io) {
    case PC_DTYPE_FLOAT16:
      static_cast<__half*>(base)[off] = __float2half_rn(v);
      return;
    case PC_DTYPE_BFLOAT16:
      static_cast<__nv_bfloat16*>(base)[off] = __float2bfloat16_rn(v);
      return;
    default:
      static_cast<float*>(base)[off] = v;
  }
}

/// The sequence-level facts of a block: context, its query rows, the chunk's row count.
struct SeqInfo {
  int ctx;       ///< context length
  int qlen;      ///< query rows of the sequence
  int64_t qbeg;  ///< first query row
  int v0;        ///< first row of the chunk (row v = i * group + j)
  int nrows;     ///< rows of this chunk (<= ROWS; <= 0: none)
  bool bad;      ///< the lengths contradict the host-side bounds
};

__device__ __forceinline__ SeqInfo seq_info(const GqaParams& p, int64_t seq, int chunk, int rows) {
  SeqInfo s;
  s.ctx = p.context_lens[seq];
  if (p.query_start != nullptr) {
    s.qbeg = p.query_start[seq];
    s.qlen = p.query_start[seq + 1] - p.query_start[seq];
  } else {
    s.qbeg = seq;
    s.qlen = 1;
  }
  s.v0 = chunk * rows;
  s.nrows = min(rows, s.qlen * p.group - s.v0);
  s.bad = s.ctx < 0 || s.ctx > p.max_context_len || s.qlen < 0 || s.qlen > p.max_query_len ||
          (s.ctx > 0 && s.qlen > s.ctx);
  return s;
}

/// One query row: where it reads and writes, and the key positions [lo, hi) it attends.
struct RowInfo {
  int64_t qrow;  ///< query / output row
  int head;      ///< query head
  int pos;       ///< position p = ctx - qlen + i
  int lo;        ///< first attended key position
  int hi;        ///< one past the last
};

__device__ __forceinline__ RowInfo row_info(const GqaParams& p, const SeqInfo& s, int kv_head,
                                            int r) {
  const int v = s.v0 + r;
  const int i = v / p.group;
  RowInfo row;
  row.qrow = s.qbeg + i;
  row.head = kv_head * p.group + (v - i * p.group);
  row.pos = s.ctx - s.qlen + i;
  row.hi = p.causal ? row.pos + 1 : s.ctx;
  row.lo = p.window > 0 ? max(0, row.pos - p.window + 1) : 0;
  if (row.hi < row.lo) row.hi = row.lo;
  return row;
}

/// exp(m - m') / (l exp(m - m') + exp(sink - m')) with m' = max(m, sink), or 1 / l: the factor
/// that turns a row's accumulator into its output.
__device__ __forceinline__ float output_factor(const GqaParams& p, int head, float m, float l) {
  if (p.sinks == nullptr) return 1.f / l;
  const float sink = p.sinks[head];
  const float m2 = fmaxf(m, sink);
  const float e = expf(m - m2);
  return e / (l * e + expf(sink - m2));
}

/// Context 0 (rows attend nothing: +0) or lengths that contradict the host-side bounds (NaN
/// rather than a plausible number): partition 0 fills the chunk's output rows, HEAD dims each.
template <int HEAD>
__device__ __forceinline__ void fill_rows(const GqaParams& p, const SeqInfo& s, int kv_head,
                                          int threads) {
  if (blockIdx.z != 0) return;
  const float fill = s.bad ? NAN : 0.f;
  for (int r = 0; r < s.nrows; ++r) {
    const RowInfo row = row_info(p, s, kv_head, r);
    for (int d = static_cast<int>(threadIdx.x); d < HEAD; d += threads) {
      store_io(p.out, row.qrow * p.out_stride_token + row.head * p.out_stride_head + d, p.io_dtype,
               fill);
    }
  }
}

/// What a partition block works on: its sequence facts, its partition and the key span
/// [span_lo, span_hi) some row of its chunk attends there (empty: nothing to read or write).
struct BlockSpan {
  int kv_head;  ///< the block's kv head (blockIdx.x % num_kv_heads)
  int64_t seq;  ///< its sequence (blockIdx.y)
  SeqInfo s;    ///< the sequence and the chunk's rows
  int part;     ///< absolute partition index
  int span_lo;  ///< first key position a row of the chunk attends in the partition
  int span_hi;  ///< one past the last
};

/// The span of block (chunk, seq, blockIdx.z) with `rows` rows a chunk. Rows attend ranges in
/// order of position, so their union is [lo(first row), hi(last row)). A windowed grid covers
/// only the chunk's span: z counts from the chunk's first attended partition. Only meaningful
/// when s.nrows > 0, !s.bad and s.ctx > 0.
__device__ __forceinline__ BlockSpan block_span(const GqaParams& p, const SeqInfo& s, int kv_head) {
  BlockSpan b;
  b.s = s;
  const RowInfo first = row_info(p, s, kv_head, 0);
  const RowInfo last = row_info(p, s, kv_head, s.nrows - 1);
  b.part = (p.window > 0 ? first.lo / p.partition_size : 0) + static_cast<int>(blockIdx.z);
  const int part_lo = b.part * p.partition_size;
  const int part_hi = min(part_lo + p.partition_size, s.ctx);
  b.span_lo = max(part_lo, first.lo);
  b.span_hi = min(part_hi, last.hi);
  return b;
}

/// The prologue of both partition kernels (`rows` rows a chunk, `threads` threads, head size
/// HEAD): the block's span in `b`, and true when it has keys to read. Without (no rows, no
/// key of this partition attended) it returns false; context 0 or lengths that contradict the
/// host bounds are written by fill_rows first.
template <int HEAD>
__device__ __forceinline__ bool partition_block(const GqaParams& p, int rows, int threads,
                                                BlockSpan& b) {
  const int kv_head = static_cast<int>(blockIdx.x) % p.num_kv_heads;
  const int chunk = static_cast<int>(blockIdx.x) / p.num_kv_heads;
  const int64_t seq = blockIdx.y;
  const SeqInfo s = seq_info(p, seq, chunk, rows);
  if (s.nrows <= 0) return false;
  if (s.bad || s.ctx == 0) {
    fill_rows<HEAD>(p, s, kv_head, threads);
    return false;
  }
  b = block_span(p, s, kv_head);
  b.kv_head = kv_head;
  b.seq = seq;
  return b.span_lo < b.span_hi;
}

/// Finishes query row `row` of partition `part` from its max `m`, sum `l` and accumulator
/// `acc(d)` (d < HEAD, already scaled by v_scale): the output when the row's attended range
/// lies in this one partition (the sink joining the denominator), else the workspace entries
/// gqa_merge_kernel reads; nothing when the row attends nothing here. The `width` threads that
/// finish the row (a warp, or the block) call it with the same row, each with its `index`
/// below `width`: thread `index` writes dims index, index + width, ... and thread 0 the
/// workspace's max and sum.
template <int HEAD, class Acc>
__device__ __forceinline__ void write_row(const GqaParams& p, const RowInfo& row, int part, float m,
                                          float l, Acc acc, int index, int width) {
  const int j_lo = row.lo / p.partition_size;
  const int j_last = (row.hi - 1) / p.partition_size;
  if (part < j_lo || part > j_last) return;
  const bool single = j_lo == j_last;
  const float factor = single ? output_factor(p, row.head, m, l) : 0.f;
  const int64_t ws = (row.qrow * p.num_heads + row.head) * p.max_partitions + part;
  for (int d = index; d < HEAD; d += width) {
    const float o = acc(d);
    if (single) {
      store_io(p.out, row.qrow * p.out_stride_token + row.head * p.out_stride_head + d, p.io_dtype,
               o * factor);
    } else {
      p.ws_out[ws * HEAD + d] = o;
    }
  }
  if (!single && index == 0) {
    p.ws_max[ws] = m;
    p.ws_sum[ws] = l;
  }
}

}  // namespace pagecheck::kernels::gqa
