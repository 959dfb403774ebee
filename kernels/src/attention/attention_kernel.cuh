#pragma once
/// The paged-attention kernels of v1 and v2_split. One thread block handles one (query row,
/// query head) of a sequence (grid x = new token * num_heads + head, grid y = sequence) and
/// either the row's whole attended range (v1) or one partition of p.partition_size tokens of it
/// (v2_split; the launcher picks the size, choose_partition_size). A row attends [lo, hi)
/// (attention_rows.h: causal or not among the new tokens, sliding window); v2's partitions start
/// at lo rounded down to the tile, so a windowed row never touches a tile wholly outside it.
///
/// Phases (see docs/kernels.md):
///  1. query: into registers, straight from global memory (v1_baseline) or through shared memory
///     loaded once by the whole block (v1_shared_q, v2_split);
///  2. keys: each warp walks its tiles (BLOCK_SIZE slots; a cache block of 2^tile_shift tiles),
///     lanes load whole 16-byte x-groups of K, a token's lanes reduce the dot product with
///     shuffles, one lane stores scale * q.k in shared memory; a pass over the block's logits
///     applies the soft-cap, then ALiBi, and takes the max;
///  3. softmax over the range's tokens in float32 (max, exp, sum, normalize; v1 folds the sink
///     into the normalization);
///  4. values: lanes load 16-byte vectors of kX consecutive tokens of one dimension and
///     accumulate weight * value in float32; warps combine through shared memory.
/// v2_split issues the loads of two of a warp's tiles together where the per-lane budget allows
/// (kKeyBlockUnroll / kValueBlockUnroll), with the partition's block-table entries in shared
/// memory, a warp's first value pair is loaded before the softmax (4a), and its reduction kernel
/// (which adds the sink once) is a programmatic dependent launch, or, when one partition covers
/// every row (p.max_num_partitions == 1), absent: the partition kernel then writes the output,
/// sink folded in as in v1; v1 keeps one tile per iteration. Without a window the context length,
/// the query and the block-table entries are loaded together, before the first use of any of them.
/// A token outside the range is never used: key loads of such lanes re-read a slot inside the
/// range, and a tile the range cuts reads its values element by element inside the range only.
/// Block-table entries past the sequence's last block are never used; v2 may read them up to
/// the host-side bound ceil(max_context_len / block_size) <= max_blocks_per_seq, inside the row.
/// Context-0 rows become +0; lengths that contradict the host-side bounds give NaN rows.
#include <cuda_runtime.h>

#include <cmath>

#include "attention/attention_rows.h"
#include "attention/attention_traits.cuh"

namespace pagecheck::kernels {

/// Programmatic dependent launch (sm_90): lets the grid launched after this one with
/// cudaLaunchAttributeProgrammaticStreamSerialization start before this grid ends.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/// Waits until the preceding grid has completed and its memory is visible (a no-op when this
/// grid was launched without programmatic dependent launch).
__device__ __forceinline__ void wait_for_primary_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Fills one (query row, head) output row with `value`: 0 for a context-0 row (it attends
/// nothing), NaN when the lengths contradicted the host-side bounds.
template <typename T, int HEAD_SIZE>
__device__ void fill_output(const AttentionParams& p, int64_t qrow, int head, float value) {
  T* out = static_cast<T*>(p.out) + qrow * p.out_stride_token + head * p.out_stride_head;
  for (int d = threadIdx.x; d < HEAD_SIZE; d += blockDim.x) out[d] = from_float<T>(value);
}

/// The sequence-level facts of a (query row i, head) block.
struct RowSeq {
  int ctx;       ///< context length
  int q_len;     ///< query rows of the sequence
  int64_t qrow;  ///< query / output row of row i
  bool bad;      ///< the lengths contradict the host-side bounds the grid was sized for
};

__device__ __forceinline__ RowSeq row_seq(const AttentionParams& p, int64_t seq, int i) {
  RowSeq s;
  s.ctx = p.context_lens[seq];
  int64_t q_begin = seq;
  s.q_len = 1;
  if (p.query_start != nullptr) {
    q_begin = p.query_start[seq];
    s.q_len = p.query_start[seq + 1] - p.query_start[seq];
  }
  s.qrow = q_begin + i;
  s.bad = s.ctx < 0 || s.ctx > p.max_context_len || s.q_len > p.max_query_len ||
          (s.ctx > 0 && s.q_len > s.ctx);
  return s;
}

/// exp(m - m') / (l exp(m - m') + exp(sink - m')) with m' = max(m, sink): what turns weights
/// normalized by l into weights normalized by the whole denominator, sink included.
__device__ __forceinline__ float sink_factor(float sink, float m, float l) {
  const float m2 = fmaxf(m, sink);
  const float e = expf(m - m2);
  return e / (l * e + expf(sink - m2));
}

/// True where this block writes the row's output itself: v1, and v2_split when one partition
/// covers every row's range (the launcher then runs no reduction).
template <bool PARTITIONED>
__device__ __forceinline__ bool writes_output(const AttentionParams& p) {
  return !PARTITIONED || p.max_num_partitions == 1;
}

template <typename T, int HEAD_SIZE, int BLOCK_SIZE, bool SHARED_Q, bool PARTITIONED>
__global__ void __launch_bounds__(
    AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>::kThreads,
    PARTITIONED ? AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>::kSplitMinBlocksPerSm : 0)
    paged_attention_kernel(const __grid_constant__ AttentionParams p) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  constexpr int kWarps = Tr::kWarps;
  constexpr int kTpt = Tr::kKeyThreadsPerToken;

  extern __shared__ float logits[];  // one float per token of [start_token, end_token)
  __shared__ float out_partial[kWarps][HEAD_SIZE];
  __shared__ float scratch_max[kWarps];
  __shared__ float scratch_sum[kWarps];
  __shared__ uint4 q_shared[SHARED_Q ? Tr::kGroups : 1];
  // v2 with block unroll: the physical block of each of the partition's tiles (kSharedTable).
  constexpr bool kSharedTable = PARTITIONED && Tr::kKeyBlockUnroll > 1;
  __shared__ int32_t block_ids[kSharedTable ? kMaxPartitionSize / BLOCK_SIZE : 1];
  static_assert(!kSharedTable || (SHARED_Q && kMaxPartitionSize / BLOCK_SIZE <= Tr::kThreads),
                "one block-table entry per thread");

  if constexpr (PARTITIONED) allow_dependent_launch();  // the reduction may start waiting
  const int head = static_cast<int>(blockIdx.x) % p.num_heads;
  const int row_i = static_cast<int>(blockIdx.x) / p.num_heads;  // new token of the sequence
  const int64_t seq = blockIdx.y;
  const int partition = PARTITIONED ? static_cast<int>(blockIdx.z) : 0;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  const int kv_head = head / p.queries_per_kv;
  const int32_t* block_row = p.block_table + seq * p.block_table_stride;
  // Tile `blk` (BLOCK_SIZE slots) lies in cache block blk >> tile_shift, at slot
  // (blk & sub_mask) * BLOCK_SIZE.
  const int shift = p.tile_shift;
  const int sub_mask = (1 << shift) - 1;

  // The lengths, and (v2 with block unroll, no window: the partition then starts at
  // partition * partition_size) the partition's block-table entries do not depend on each
  // other: their loads are in flight together. The entries are read below the host-side bound
  // ceil(max_context_len / BLOCK_SIZE) tiles (inside the table row); entries past this
  // sequence's last block are never used.
  const RowSeq s = row_seq(p, seq, row_i);
  int32_t table_entry = 0;
  if constexpr (kSharedTable) {
    if (p.window == 0) {
      const int first_tile = partition * (p.partition_size / BLOCK_SIZE);
      const int bound_token = min((partition + 1) * p.partition_size, p.max_context_len);
      const int bound_tile = (bound_token + BLOCK_SIZE - 1) / BLOCK_SIZE;
      if (first_tile + static_cast<int>(threadIdx.x) < bound_tile) {
        table_entry = block_row[(first_tile + static_cast<int>(threadIdx.x)) >> shift];
      }
    }
  }
  if (row_i >= s.q_len) return;  // the sequence has fewer new tokens than the grid's bound

  // 1. Query: lane `member` of a token's lane group holds x-groups member + k * kTpt.
  const int member = lane % kTpt;
  const char* q_base =
      static_cast<const char*>(p.query) +
      (s.qrow * p.query_stride_token + int64_t{head} * p.query_stride_head) * int64_t{sizeof(T)};
  uint4 q[Tr::kKeyVecsPerThread];
  if constexpr (SHARED_Q) {
    static_assert(Tr::kGroups <= Tr::kThreads, "one query vector per thread");
    uint4 q_own = make_uint4(0, 0, 0, 0);
    if (threadIdx.x < Tr::kGroups) q_own = load16(q_base + int64_t{threadIdx.x} * 16);
    if (threadIdx.x < Tr::kGroups) q_shared[threadIdx.x] = q_own;
    __syncthreads();
  }
#pragma unroll
  for (int k = 0; k < Tr::kKeyVecsPerThread; ++k) {
    const int g = member + k * kTpt;
    q[k] = make_uint4(0, 0, 0, 0);
    if (g < Tr::kGroups) {
      if constexpr (SHARED_Q) {
        q[k] = q_shared[g];
      } else {
        q[k] = load16(q_base + int64_t{g} * 16);
      }
    }
  }

  if (s.bad || s.ctx == 0) {
    // Context 0: the row attends nothing and becomes +0. Lengths inconsistent with the bounds
    // the shared memory / workspace were sized for: NaN rather than a plausible number. v2: the
    // reduction writes the row (or this block, when it writes the output directly).
    if (writes_output<PARTITIONED>(p)) {
      fill_output<T, HEAD_SIZE>(p, s.qrow, head, s.bad ? NAN : 0.f);
    }
    return;
  }
  // The row attends [row.lo, row.hi); this block handles the part of it in [start_token,
  // start_token + partition_size) (v1: from row.base on), i.e. [lo_token, end_token), never
  // empty. start_token is tile-aligned; tiles wholly outside [lo_token, end_token) are not read.
  const AttentionRow row =
      attention_row(s.ctx, s.q_len, row_i, p.window, p.causal != 0, BLOCK_SIZE);
  const int start_token = PARTITIONED ? row.base + partition * p.partition_size : row.base;
  if (start_token >= row.hi) return;  // v2: partition past this row's range
  const int lo_token = max(start_token, row.lo);
  const int end_token = PARTITIONED ? min(start_token + p.partition_size, row.hi) : row.hi;
  const int start_block = start_token / BLOCK_SIZE;
  const int end_block = (end_token + BLOCK_SIZE - 1) / BLOCK_SIZE;
  if constexpr (kSharedTable) {
    if (p.window != 0) {  // the partition start depends on the row: entries read now
      if (start_block + static_cast<int>(threadIdx.x) < end_block) {
        table_entry = block_row[(start_block + static_cast<int>(threadIdx.x)) >> shift];
      }
    }
    block_ids[threadIdx.x] = table_entry;
    __syncthreads();
  }
  // Physical block of tile `blk` of this range, -1 past its end.
  [[maybe_unused]] const auto physical_of = [&](int blk) -> int64_t {
    if (blk >= end_block) return -1;
    if constexpr (kSharedTable) {
      return block_ids[blk - start_block];
    } else {
      return block_row[blk >> shift];
    }
  };
  const auto key_tile = [&](int64_t phys, int blk) {
    return static_cast<const char*>(p.key_cache) +
           (phys * p.key_stride_block + kv_head * p.key_stride_head +
            int64_t{(blk & sub_mask) * BLOCK_SIZE} * p.key_stride_slot) *
               int64_t{sizeof(T)};
  };
  const auto value_tile = [&](int64_t phys, int blk) {
    return static_cast<const T*>(p.value_cache) + phys * p.value_stride_block +
           kv_head * p.value_stride_head + (blk & sub_mask) * BLOCK_SIZE;
  };
  const float slope = p.alibi_slopes != nullptr ? p.alibi_slopes[head] : 0.f;
  // A slot of tile `blk` inside [lo_token, end_token): lanes whose token is outside read it
  // and drop the result.
  const auto first_valid_slot = [&](int blk) { return max(lo_token - blk * BLOCK_SIZE, 0); };

  // 2. Keys -> logits.
  const int token_in_step = lane / kTpt;
  // Loads are unconditional so that all of a step group's loads are in flight before the
  // first use: a lane whose token is outside the range reads a slot of the same tile inside
  // it and drops the result; a lane past the last x-group re-reads the last one and drops its
  // product.
  if constexpr (!PARTITIONED || Tr::kKeyBlockUnroll == 1) {
    int64_t physical =
        start_block + warp < end_block ? block_row[(start_block + warp) >> shift] : 0;
    for (int blk = start_block + warp; blk < end_block; blk += kWarps) {
      const int64_t next_physical =
          blk + kWarps < end_block ? block_row[(blk + kWarps) >> shift] : 0;
      const char* k_block = key_tile(physical, blk);
      const int fallback = first_valid_slot(blk);
      for (int s0 = 0; s0 < Tr::kKeySteps; s0 += Tr::kKeyStepUnroll) {
        uint4 kvec[Tr::kKeyStepUnroll][Tr::kKeyVecsPerThread];
#pragma unroll
        for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
          const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
          const int token = blk * BLOCK_SIZE + slot;
          const int slot_read = token >= lo_token && token < end_token ? slot : fallback;
#pragma unroll
          for (int k = 0; k < Tr::kKeyVecsPerThread; ++k) {
            const int g = min(member + k * kTpt, Tr::kGroups - 1);
            kvec[u][k] = load16(k_block + (g * p.key_stride_group + slot_read * p.key_stride_slot) *
                                              int64_t{sizeof(T)});
          }
        }
#pragma unroll
        for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
          float dot = 0.f;
#pragma unroll
          for (int k = 0; k < Tr::kKeyVecsPerThread; ++k) {
            const float prod = dot16<T>(q[k], kvec[u][k]);
            if (Tr::kGroups % kTpt == 0 || member + k * kTpt < Tr::kGroups) dot += prod;
          }
          const float d = group_sum<kTpt>(dot);
          const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
          const int token = blk * BLOCK_SIZE + slot;
          if (member == 0 && token >= lo_token && token < end_token) {
            logits[token - start_token] = p.scale * d;
          }
        }
      }
      physical = next_physical;
    }
  } else {
    // A warp takes kKeyBlockUnroll tiles (blk0, blk0 + kWarps, ...) per iteration and issues
    // all their loads together. A tile of the group past end_block reads the group's first tile
    // (inside the range) and all its tokens are dropped. Physical blocks come from shared
    // memory (block_ids).
    constexpr int kKbu = Tr::kKeyBlockUnroll;
    for (int blk0 = start_block + warp; blk0 < end_block; blk0 += kWarps * kKbu) {
      int64_t physical[kKbu];
      const char* k_block[kKbu];
#pragma unroll
      for (int b = 0; b < kKbu; ++b) {
        physical[b] = physical_of(blk0 + b * kWarps);
      }
#pragma unroll
      for (int b = 0; b < kKbu; ++b) {
        k_block[b] = physical[b] >= 0 ? key_tile(physical[b], blk0 + b * kWarps)
                                      : key_tile(physical[0], blk0);
      }
      for (int s0 = 0; s0 < Tr::kKeySteps; s0 += Tr::kKeyStepUnroll) {
        uint4 kvec[kKbu][Tr::kKeyStepUnroll][Tr::kKeyVecsPerThread];
#pragma unroll
        for (int b = 0; b < kKbu; ++b) {
          const int blk_read = physical[b] >= 0 ? blk0 + b * kWarps : blk0;
          const int fallback = first_valid_slot(blk_read);
#pragma unroll
          for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
            const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
            const int token_read = blk_read * BLOCK_SIZE + slot;
            const int slot_read =
                token_read >= lo_token && token_read < end_token ? slot : fallback;
#pragma unroll
            for (int k = 0; k < Tr::kKeyVecsPerThread; ++k) {
              const int g = min(member + k * kTpt, Tr::kGroups - 1);
              kvec[b][u][k] =
                  load16(k_block[b] + (g * p.key_stride_group + slot_read * p.key_stride_slot) *
                                          int64_t{sizeof(T)});
            }
          }
        }
#pragma unroll
        for (int b = 0; b < kKbu; ++b) {
#pragma unroll
          for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
            float dot = 0.f;
#pragma unroll
            for (int k = 0; k < Tr::kKeyVecsPerThread; ++k) {
              const float prod = dot16<T>(q[k], kvec[b][u][k]);
              if (Tr::kGroups % kTpt == 0 || member + k * kTpt < Tr::kGroups) dot += prod;
            }
            const float d = group_sum<kTpt>(dot);
            const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
            const int token = (blk0 + b * kWarps) * BLOCK_SIZE + slot;
            if (member == 0 && token >= lo_token && token < end_token) {
              logits[token - start_token] = p.scale * d;
            }
          }
        }
      }
    }
  }

  // 4a. Values, first group (v2 with value block unroll): the warp's first kValueBlockUnroll
  // tiles, when all of them are full, are loaded now, so that their round trip overlaps the
  // barriers and passes of the softmax instead of following them (the key vectors' registers
  // are free here). The group loop below starts with them.
  const int vec_in_row = lane % Tr::kValueLanesPerRow;
  const int row0 = lane / Tr::kValueLanesPerRow;
  constexpr int kVbu = Tr::kValueBlockUnroll;
  constexpr bool kValueGroups = PARTITIONED && kVbu > 1;
  using ValueGroup = uint4[kValueGroups ? kVbu : 1][Tr::kValueChunks][Tr::kValueRowsPerThread];
  // When the group's first tile starts inside the range and its last tile is full, every tile
  // of the group exists and is full.
  [[maybe_unused]] const auto value_group_full = [&](int blk0) {
    return blk0 * BLOCK_SIZE >= lo_token &&
           (blk0 + (kVbu - 1) * kWarps + 1) * BLOCK_SIZE <= end_token;
  };
  [[maybe_unused]] const auto load_value_group = [&](int blk0, ValueGroup& vvec) {
#pragma unroll
    for (int b = 0; b < (kValueGroups ? kVbu : 1); ++b) {
      const T* v_block = value_tile(physical_of(blk0 + b * kWarps), blk0 + b * kWarps);
#pragma unroll
      for (int u = 0; u < Tr::kValueChunks; ++u) {
        const int slot0 = u * Tr::kValueTokensPerChunk + vec_in_row * Tr::kValueVec;
#pragma unroll
        for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
          const int row = min(row0 + r * Tr::kValueRowsPerStep, HEAD_SIZE - 1);
          vvec[b][u][r] = load16(v_block + row * p.value_stride_dim + slot0);
        }
      }
    }
  };
  [[maybe_unused]] ValueGroup vvec;
  [[maybe_unused]] const int first_group = start_block + warp;
  [[maybe_unused]] bool prefetched = false;
  if constexpr (kValueGroups) {
    prefetched = first_group < end_block && value_group_full(first_group);
    if (prefetched) load_value_group(first_group, vvec);
  }

  // 2b. Order of operations (docs/reference.md): scale (above), soft-cap, ALiBi; the masks are
  // the range. The key phase stored the scaled dot products; this pass over the shared logits
  // applies the soft-cap and ALiBi and takes the max (tanhf, the slope and the position inside
  // the unrolled key loops cost registers that the loads in flight need).
  const int first = lo_token - start_token;
  const int last = end_token - start_token;
  __syncthreads();  // every scaled dot product is in shared memory
  float qk_max = -INFINITY;
  const bool capped = p.soft_cap > 0.f;  // block-uniform
  for (int k = first + static_cast<int>(threadIdx.x); k < last; k += Tr::kThreads) {
    float x = logits[k];
    if (capped) x = p.soft_cap * tanhf(x / p.soft_cap);
    const float logit = x + slope * static_cast<float>(start_token + k - row.pos);
    logits[k] = logit;
    qk_max = fmaxf(qk_max, logit);
  }

  // 3. Softmax over [lo_token, end_token) in float32 (never empty: the max is finite and
  // exp_sum >= 1, the max term being exp(0)). v1 folds the sink into the normalization; v2
  // leaves it to the reduction.
  const float max_logit = block_max<kWarps>(qk_max, scratch_max);
  float sum = 0.f;
  for (int k = first + static_cast<int>(threadIdx.x); k < last; k += Tr::kThreads) {
    const float e = expf(logits[k] - max_logit);
    logits[k] = e;
    sum += e;
  }
  const float exp_sum = block_sum<kWarps>(sum, scratch_sum);
  float inv_sum = 1.f / exp_sum;
  if (writes_output<PARTITIONED>(p)) {
    if (p.sinks != nullptr) inv_sum = sink_factor(p.sinks[head], max_logit, exp_sum);
  }
  for (int k = first + static_cast<int>(threadIdx.x); k < last; k += Tr::kThreads) {
    logits[k] *= inv_sum;
  }
  __syncthreads();

  // 4. Values: acc[r] holds dimension row0 + r * kValueRowsPerStep.
  float acc[Tr::kValueRowsPerThread];
#pragma unroll
  for (int r = 0; r < Tr::kValueRowsPerThread; ++r) acc[r] = 0.f;
  // A tile wholly inside [lo_token, end_token) takes a fast path: unconditional 16-byte loads
  // (rows past head_size re-read the last row; their sums are never stored). A tile the range
  // cuts (the sequence's last partial one, the first one of a window) reads element by
  // element, only inside the range: a weight is never multiplied by a value that was not read.
  const auto tile_full = [&](int blk) {
    return blk * BLOCK_SIZE >= lo_token && (blk + 1) * BLOCK_SIZE <= end_token;
  };
  auto process_block = [&](int blk, int64_t phys) {
    const T* v_block = value_tile(phys, blk);
    const bool block_full = tile_full(blk);  // warp-uniform
    for (int c0 = 0; c0 < Tr::kValueChunks; c0 += Tr::kValueChunkUnroll) {
      if (block_full) {
        uint4 vvec[Tr::kValueChunkUnroll][Tr::kValueRowsPerThread];
#pragma unroll
        for (int u = 0; u < Tr::kValueChunkUnroll; ++u) {
          const int slot0 = (c0 + u) * Tr::kValueTokensPerChunk + vec_in_row * Tr::kValueVec;
#pragma unroll
          for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
            const int row = min(row0 + r * Tr::kValueRowsPerStep, HEAD_SIZE - 1);
            vvec[u][r] = load16(v_block + row * p.value_stride_dim + slot0);
          }
        }
#pragma unroll
        for (int u = 0; u < Tr::kValueChunkUnroll; ++u) {
          const int slot0 = (c0 + u) * Tr::kValueTokensPerChunk + vec_in_row * Tr::kValueVec;
          const float* w = logits + (blk * BLOCK_SIZE + slot0 - start_token);
#pragma unroll
          for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
            float v[Tr::kValueVec];
            vec_to_float<T>(vvec[u][r], v);
#pragma unroll
            for (int j = 0; j < Tr::kValueVec; ++j) acc[r] = fmaf(w[j], v[j], acc[r]);
          }
        }
      } else {
#pragma unroll
        for (int u = 0; u < Tr::kValueChunkUnroll; ++u) {
          const int slot0 = (c0 + u) * Tr::kValueTokensPerChunk + vec_in_row * Tr::kValueVec;
          const int token0 = blk * BLOCK_SIZE + slot0;
#pragma unroll
          for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
            const int row = row0 + r * Tr::kValueRowsPerStep;
            if (row < HEAD_SIZE) {
              const T* v_ptr = v_block + row * p.value_stride_dim + slot0;
#pragma unroll
              for (int j = 0; j < Tr::kValueVec; ++j) {
                if (token0 + j >= lo_token && token0 + j < end_token) {
                  acc[r] = fmaf(logits[token0 + j - start_token], load_float<T>(v_ptr + j), acc[r]);
                }
              }
            }
          }
        }
      }
    }
  };
  if constexpr (!PARTITIONED || Tr::kValueBlockUnroll == 1) {
    int64_t physical =
        start_block + warp < end_block ? block_row[(start_block + warp) >> shift] : 0;
    for (int blk = start_block + warp; blk < end_block; blk += kWarps) {
      const int64_t next_physical =
          blk + kWarps < end_block ? block_row[(blk + kWarps) >> shift] : 0;
      process_block(blk, physical);
      physical = next_physical;
    }
  } else {
    // A warp takes kValueBlockUnroll tiles (blk0, blk0 + kWarps, ...) per iteration; when all
    // of them are full their loads are issued together (the first group's before the softmax,
    // 4a), otherwise (only at the range's ends) each tile goes through process_block.
    for (int blk0 = first_group; blk0 < end_block; blk0 += kWarps * kVbu) {
      if (value_group_full(blk0)) {
        if (!prefetched || blk0 != first_group) load_value_group(blk0, vvec);
#pragma unroll
        for (int b = 0; b < kVbu; ++b) {
#pragma unroll
          for (int u = 0; u < Tr::kValueChunks; ++u) {
            const int slot0 = u * Tr::kValueTokensPerChunk + vec_in_row * Tr::kValueVec;
            const float* w = logits + ((blk0 + b * kWarps) * BLOCK_SIZE + slot0 - start_token);
#pragma unroll
            for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
              float v[Tr::kValueVec];
              vec_to_float<T>(vvec[b][u][r], v);
#pragma unroll
              for (int j = 0; j < Tr::kValueVec; ++j) acc[r] = fmaf(w[j], v[j], acc[r]);
            }
          }
        }
      } else {
#pragma unroll
        for (int b = 0; b < kVbu; ++b) {
          const int64_t phys = physical_of(blk0 + b * kWarps);
          if (phys >= 0) process_block(blk0 + b * kWarps, phys);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < Tr::kValueRowsPerThread; ++r) {
    const float total = group_sum<Tr::kValueLanesPerRow>(acc[r]);
    const int row = row0 + r * Tr::kValueRowsPerStep;
    if (vec_in_row == 0 && row < HEAD_SIZE) out_partial[warp][row] = total;
  }
  __syncthreads();

  for (int d = threadIdx.x; d < HEAD_SIZE; d += Tr::kThreads) {
    float o = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) o += out_partial[w][d];
    if (!writes_output<PARTITIONED>(p)) {
      const int64_t idx = (s.qrow * p.num_heads + head) * p.max_num_partitions + partition;
      p.partition_out[idx * HEAD_SIZE + d] = o;
      if (d == 0) {
        p.partition_max[idx] = max_logit;
        p.partition_sum[idx] = exp_sum;
      }
    } else {
      T* out = static_cast<T*>(p.out) + s.qrow * p.out_stride_token + head * p.out_stride_head;
      out[d] = from_float<T>(o);
    }
  }
}

/// v2_split reduction: merges the partitions of one (query row, head) with the global max, the
/// sink (when given) joining the maximum and the denominator once.
template <typename T, int HEAD_SIZE>
__global__ void __launch_bounds__(128)
    paged_attention_reduce_kernel(const __grid_constant__ AttentionParams p) {
  constexpr int kThreads = 128;
  constexpr int kWarps = kThreads / 32;
  extern __shared__ float reduce_smem[];  // [max_num_partitions] max, then [..] weights
  __shared__ float scratch_max[kWarps];
  __shared__ float scratch_sum[kWarps];
  float* part_max = reduce_smem;
  float* part_weight = reduce_smem + p.max_num_partitions;

  const int head = static_cast<int>(blockIdx.x) % p.num_heads;
  const int row_i = static_cast<int>(blockIdx.x) / p.num_heads;
  const int64_t seq = blockIdx.y;
  const RowSeq s = row_seq(p, seq, row_i);
  if (row_i >= s.q_len) return;
  if (s.bad || s.ctx == 0) {
    fill_output<T, HEAD_SIZE>(p, s.qrow, head, s.bad ? NAN : 0.f);
    return;
  }
  const AttentionRow row =
      attention_row(s.ctx, s.q_len, row_i, p.window, p.causal != 0, p.tile_size);
  // Every one of these partitions holds at least one token, so its max is finite.
  const int num_partitions = min(row_partitions(row, p.partition_size), p.max_num_partitions);
  const int64_t base = (s.qrow * p.num_heads + head) * p.max_num_partitions;
  const float sink = p.sinks != nullptr ? p.sinks[head] : -INFINITY;
  wait_for_primary_grid();  // the partition kernel's workspace writes are visible after this

  float m = -INFINITY;
  for (int i = threadIdx.x; i < num_partitions; i += kThreads) {
    const float pm = p.partition_max[base + i];
    part_max[i] = pm;
    m = fmaxf(m, pm);
  }
  const float global_max = fmaxf(block_max<kWarps>(m, scratch_max), sink);
  float sum = 0.f;
  for (int i = threadIdx.x; i < num_partitions; i += kThreads) {
    const float w = p.partition_sum[base + i] * expf(part_max[i] - global_max);
    part_weight[i] = w;
    sum += w;
  }
  float total = block_sum<kWarps>(sum, scratch_sum);
  if (p.sinks != nullptr) total += expf(sink - global_max);
  const float inv_total = 1.f / total;

  T* out = static_cast<T*>(p.out) + s.qrow * p.out_stride_token + head * p.out_stride_head;
  for (int d = threadIdx.x; d < HEAD_SIZE; d += kThreads) {
    float o = 0.f;
    for (int i = 0; i < num_partitions; ++i) {
      o = fmaf(p.partition_out[(base + i) * HEAD_SIZE + d], part_weight[i], o);
    }
    out[d] = from_float<T>(o * inv_total);
  }
}

}  // namespace pagecheck::kernels
