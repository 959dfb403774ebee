#pragma once
/// The paged-attention decode kernels. One thread block handles one (sequence, query head) and
/// either the whole context (v1) or one partition of p.partition_size tokens (v2_split; the
/// launcher picks the size, choose_partition_size).
///
/// Phases (see docs/kernels.md):
///  1. query: into registers, straight from global memory (v1_baseline) or through shared memory
///     loaded once by the whole block (v1_shared_q, v2_split);
///  2. keys: each warp walks its cache blocks, lanes load whole 16-byte x-groups of K, a token's
///     lanes reduce the dot product with shuffles, one lane stores scale*q.k + alibi to shared;
///  3. softmax over the block's tokens in float32 (max, exp, sum, normalize);
///  4. values: lanes load 16-byte vectors of kX consecutive tokens of one dimension and
///     accumulate weight * value in float32; warps combine through shared memory.
/// v2_split issues the loads of two of a warp's cache blocks together where the per-lane budget
/// allows (kKeyBlockUnroll / kValueBlockUnroll), with the partition's block-table entries in
/// shared memory, and its reduction kernel is a programmatic dependent launch; v1 keeps one
/// block per iteration. The context length, the query and the block-table entries are loaded
/// together, before the first use of any of them.
/// A token past the context is never read: loads are masked by token index, and the last
/// partial value vector is read element by element. Block-table entries past the sequence's
/// last block are never used; v2 may read them up to the host-side bound
/// ceil(max_context_len / block_size) <= max_blocks_per_seq, inside the table row.
#include <cuda_runtime.h>

#include <cmath>

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

/// Writes NaN to one (seq, head) output row: the context length contradicted max_context_len.
template <typename T, int HEAD_SIZE>
__device__ void poison_output(const AttentionParams& p, int64_t seq, int head) {
  T* out = static_cast<T*>(p.out) + seq * p.out_stride_seq + head * p.out_stride_head;
  for (int d = threadIdx.x; d < HEAD_SIZE; d += blockDim.x) out[d] = from_float<T>(NAN);
}

template <typename T, int HEAD_SIZE, int BLOCK_SIZE, bool SHARED_Q, bool PARTITIONED>
__global__ void __launch_bounds__(
    AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>::kThreads,
    PARTITIONED ? AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>::kSplitMinBlocksPerSm : 0)
    paged_attention_kernel(const __grid_constant__ AttentionParams p) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  constexpr int kWarps = Tr::kWarps;
  constexpr int kTpt = Tr::kKeyThreadsPerToken;

  extern __shared__ float logits[];  // one float per token of this block's range
  __shared__ float out_partial[kWarps][HEAD_SIZE];
  __shared__ float scratch_max[kWarps];
  __shared__ float scratch_sum[kWarps];
  __shared__ uint4 q_shared[SHARED_Q ? Tr::kGroups : 1];
  // v2 with block unroll: the partition's block-table entries (kSharedTable).
  constexpr bool kSharedTable = PARTITIONED && Tr::kKeyBlockUnroll > 1;
  __shared__ int32_t block_ids[kSharedTable ? kMaxPartitionSize / BLOCK_SIZE : 1];
  static_assert(!kSharedTable || (SHARED_Q && kMaxPartitionSize / BLOCK_SIZE <= Tr::kThreads),
                "one block-table entry per thread, stored with the shared query");

  if constexpr (PARTITIONED) allow_dependent_launch();  // the reduction may start waiting
  const int head = blockIdx.x;
  const int64_t seq = blockIdx.y;
  const int partition = PARTITIONED ? static_cast<int>(blockIdx.z) : 0;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  const int kv_head = head / p.queries_per_kv;
  const int32_t* block_row = p.block_table + seq * p.block_table_stride;

  // The context length, the query and (v2 with block unroll) the partition's block-table
  // entries do not depend on each other: all their loads are in flight before the first use.
  // The entries are read below the host-side bound ceil(max_context_len / BLOCK_SIZE) <=
  // max_blocks_per_seq, never outside the row; entries past this sequence's last block are
  // never used.
  const int context_len = p.context_lens[seq];
  const int part_first_block = PARTITIONED ? partition * (p.partition_size / BLOCK_SIZE) : 0;
  int32_t table_entry = 0;
  if constexpr (kSharedTable) {
    const int bound_token = min((partition + 1) * p.partition_size, p.max_context_len);
    const int bound_block = (bound_token + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (part_first_block + static_cast<int>(threadIdx.x) < bound_block) {
      table_entry = block_row[part_first_block + threadIdx.x];
    }
  }

  // 1. Query: lane `member` of a token's lane group holds x-groups member + k * kTpt.
  const int member = lane % kTpt;
  const char* q_base =
      static_cast<const char*>(p.query) +
      (seq * p.query_stride_seq + int64_t{head} * p.query_stride_head) * int64_t{sizeof(T)};
  uint4 q[Tr::kKeyVecsPerThread];
  if constexpr (SHARED_Q) {
    static_assert(Tr::kGroups <= Tr::kThreads, "one query vector per thread");
    uint4 q_own = make_uint4(0, 0, 0, 0);
    if (threadIdx.x < Tr::kGroups) q_own = load16(q_base + int64_t{threadIdx.x} * 16);
    if (threadIdx.x < Tr::kGroups) q_shared[threadIdx.x] = q_own;
    if constexpr (kSharedTable) block_ids[threadIdx.x] = table_entry;
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

  if (context_len < 1 || context_len > p.max_context_len) {
    // Inconsistent with the host-side bound the shared memory / workspace were sized for.
    if (!PARTITIONED) poison_output<T, HEAD_SIZE>(p, seq, head);
    return;
  }
  const int start_token = PARTITIONED ? partition * p.partition_size : 0;
  if (start_token >= context_len) return;  // v2: partition past this sequence's context
  const int end_token =
      PARTITIONED ? min(start_token + p.partition_size, context_len) : context_len;
  const int start_block = start_token / BLOCK_SIZE;
  const int end_block = (end_token + BLOCK_SIZE - 1) / BLOCK_SIZE;
  // Physical block of logical block `blk` of this range, -1 past its end.
  [[maybe_unused]] const auto physical_of = [&](int blk) -> int64_t {
    if (blk >= end_block) return -1;
    if constexpr (kSharedTable) {
      return block_ids[blk - part_first_block];
    } else {
      return block_row[blk];
    }
  };
  [[maybe_unused]] const auto key_block_bytes = [&](int64_t phys) {
    return static_cast<const char*>(p.key_cache) +
           (phys * p.key_stride_block + kv_head * p.key_stride_head) * int64_t{sizeof(T)};
  };

  // 2. Keys -> logits.
  const float slope = p.alibi_slopes != nullptr ? p.alibi_slopes[head] : 0.f;
  const int token_in_step = lane / kTpt;
  float qk_max = -INFINITY;
  // Loads are unconditional so that all of a step group's loads are in flight before the
  // first use: a lane whose token is past the context reads slot 0 of the same block (inside
  // the context) and drops the result; a lane past the last x-group re-reads the last one and
  // drops its product.
  if constexpr (!PARTITIONED || Tr::kKeyBlockUnroll == 1) {
    int64_t physical = start_block + warp < end_block ? block_row[start_block + warp] : 0;
    for (int blk = start_block + warp; blk < end_block; blk += kWarps) {
      const int64_t next_physical = blk + kWarps < end_block ? block_row[blk + kWarps] : 0;
      const char* k_block =
          static_cast<const char*>(p.key_cache) +
          (physical * p.key_stride_block + kv_head * p.key_stride_head) * int64_t{sizeof(T)};
      for (int s0 = 0; s0 < Tr::kKeySteps; s0 += Tr::kKeyStepUnroll) {
        uint4 kvec[Tr::kKeyStepUnroll][Tr::kKeyVecsPerThread];
#pragma unroll
        for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
          const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
          const int slot_read = blk * BLOCK_SIZE + slot < end_token ? slot : 0;
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
          if (member == 0 && token < end_token) {
            const float logit = p.scale * d + slope * static_cast<float>(token - context_len + 1);
            logits[token - start_token] = logit;
            qk_max = fmaxf(qk_max, logit);
          }
        }
      }
      physical = next_physical;
    }
  } else {
    // A warp takes kKeyBlockUnroll cache blocks (blk0, blk0 + kWarps, ...) per iteration and
    // issues all their loads together. A block of the group past end_block reads the group's
    // first block (inside the range) and all its tokens are dropped. Block-table entries come
    // from shared memory (block_ids, loaded in the prologue).
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
        k_block[b] = key_block_bytes(physical[b] >= 0 ? physical[b] : physical[0]);
      }
      for (int s0 = 0; s0 < Tr::kKeySteps; s0 += Tr::kKeyStepUnroll) {
        uint4 kvec[kKbu][Tr::kKeyStepUnroll][Tr::kKeyVecsPerThread];
#pragma unroll
        for (int b = 0; b < kKbu; ++b) {
#pragma unroll
          for (int u = 0; u < Tr::kKeyStepUnroll; ++u) {
            const int slot = (s0 + u) * Tr::kKeyTokensPerStep + token_in_step;
            const int blk_read = physical[b] >= 0 ? blk0 + b * kWarps : blk0;
            const int slot_read = blk_read * BLOCK_SIZE + slot < end_token ? slot : 0;
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
            if (member == 0 && token < end_token) {
              const float logit = p.scale * d + slope * static_cast<float>(token - context_len + 1);
              logits[token - start_token] = logit;
              qk_max = fmaxf(qk_max, logit);
            }
          }
        }
      }
    }
  }

  // 3. Softmax over [start_token, end_token) in float32.
  const float max_logit = block_max<kWarps>(qk_max, scratch_max);
  const int num_tokens = end_token - start_token;
  float sum = 0.f;
  for (int i = threadIdx.x; i < num_tokens; i += Tr::kThreads) {
    const float e = expf(logits[i] - max_logit);
    logits[i] = e;
    sum += e;
  }
  const float exp_sum = block_sum<kWarps>(sum, scratch_sum);  // >= 1: the max term is exp(0)
  const float inv_sum = 1.f / exp_sum;
  for (int i = threadIdx.x; i < num_tokens; i += Tr::kThreads) logits[i] *= inv_sum;
  __syncthreads();

  // 4. Values: acc[r] holds dimension row0 + r * kValueRowsPerStep.
  const int vec_in_row = lane % Tr::kValueLanesPerRow;
  const int row0 = lane / Tr::kValueLanesPerRow;
  float acc[Tr::kValueRowsPerThread];
#pragma unroll
  for (int r = 0; r < Tr::kValueRowsPerThread; ++r) acc[r] = 0.f;
  // Every block but the sequence's last partial one takes a fast path: unconditional 16-byte
  // loads (rows past head_size re-read the last row; their sums are never stored). The last
  // partial block reads element by element, only inside the context.
  if constexpr (!PARTITIONED || Tr::kValueBlockUnroll == 1) {
    int64_t physical = start_block + warp < end_block ? block_row[start_block + warp] : 0;
    for (int blk = start_block + warp; blk < end_block; blk += kWarps) {
      const int64_t next_physical = blk + kWarps < end_block ? block_row[blk + kWarps] : 0;
      const T* v_block = static_cast<const T*>(p.value_cache) + physical * p.value_stride_block +
                         kv_head * p.value_stride_head;
      const bool block_full = (blk + 1) * BLOCK_SIZE <= end_token;  // warp-uniform
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
                  if (token0 + j < end_token) {
                    acc[r] =
                        fmaf(logits[token0 + j - start_token], load_float<T>(v_ptr + j), acc[r]);
                  }
                }
              }
            }
          }
        }
      }
      physical = next_physical;
    }
  } else {
    // A warp takes kValueBlockUnroll cache blocks (blk0, blk0 + kWarps, ...) per iteration; when
    // all of them are full their loads are issued together, otherwise (only at the sequence's
    // end) each block goes through process_block.
    auto process_block = [&](int blk, int64_t phys) {
      const T* v_block = static_cast<const T*>(p.value_cache) + phys * p.value_stride_block +
                         kv_head * p.value_stride_head;
      const bool block_full = (blk + 1) * BLOCK_SIZE <= end_token;  // warp-uniform
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
                  if (token0 + j < end_token) {
                    acc[r] =
                        fmaf(logits[token0 + j - start_token], load_float<T>(v_ptr + j), acc[r]);
                  }
                }
              }
            }
          }
        }
      }
    };
    constexpr int kVbu = Tr::kValueBlockUnroll;
    for (int blk0 = start_block + warp; blk0 < end_block; blk0 += kWarps * kVbu) {
      int64_t vphys[kVbu];
#pragma unroll
      for (int b = 0; b < kVbu; ++b) vphys[b] = physical_of(blk0 + b * kWarps);
      // When the group's last block is full, every block of the group exists and is full.
      if constexpr (kVbu == 1) {
        process_block(blk0, vphys[0]);
      } else if ((blk0 + (kVbu - 1) * kWarps + 1) * BLOCK_SIZE <= end_token) {
        uint4 vvec[kVbu][Tr::kValueChunks][Tr::kValueRowsPerThread];
#pragma unroll
        for (int b = 0; b < kVbu; ++b) {
          const T* v_block = static_cast<const T*>(p.value_cache) +
                             vphys[b] * p.value_stride_block + kv_head * p.value_stride_head;
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
          if (vphys[b] >= 0) process_block(blk0 + b * kWarps, vphys[b]);
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
    if constexpr (PARTITIONED) {
      const int64_t idx = (seq * p.num_heads + head) * p.max_num_partitions + partition;
      p.partition_out[idx * HEAD_SIZE + d] = o;
      if (d == 0) {
        p.partition_max[idx] = max_logit;
        p.partition_sum[idx] = exp_sum;
      }
    } else {
      T* out = static_cast<T*>(p.out) + seq * p.out_stride_seq + head * p.out_stride_head;
      out[d] = from_float<T>(o);
    }
  }
}

/// v2_split reduction: merges the partitions of one (sequence, head) with the global max.
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

  const int head = blockIdx.x;
  const int64_t seq = blockIdx.y;
  const int context_len = p.context_lens[seq];
  if (context_len < 1 || context_len > p.max_context_len) {
    poison_output<T, HEAD_SIZE>(p, seq, head);
    return;
  }
  const int num_partitions = (context_len + p.partition_size - 1) / p.partition_size;
  const int64_t base = (seq * p.num_heads + head) * p.max_num_partitions;
  wait_for_primary_grid();  // the partition kernel's workspace writes are visible after this

  float m = -INFINITY;
  for (int i = threadIdx.x; i < num_partitions; i += kThreads) {
    const float pm = p.partition_max[base + i];
    part_max[i] = pm;
    m = fmaxf(m, pm);
  }
  const float global_max = block_max<kWarps>(m, scratch_max);
  float s = 0.f;
  for (int i = threadIdx.x; i < num_partitions; i += kThreads) {
    const float w = p.partition_sum[base + i] * expf(part_max[i] - global_max);
    part_weight[i] = w;
    s += w;
  }
  const float inv_total = 1.f / block_sum<kWarps>(s, scratch_sum);

  T* out = static_cast<T*>(p.out) + seq * p.out_stride_seq + head * p.out_stride_head;
  for (int d = threadIdx.x; d < HEAD_SIZE; d += kThreads) {
    float o = 0.f;
    for (int i = 0; i < num_partitions; ++i) {
      o = fmaf(p.partition_out[(base + i) * HEAD_SIZE + d], part_weight[i], o);
    }
    out[d] = from_float<T>(o * inv_total);
  }
}

}  // namespace pagecheck::kernels
