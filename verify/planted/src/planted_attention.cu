/// Planted paged-attention kernels: a plain one-pass kernel (one block per (head, sequence),
/// logits in shared memory) and a split-K version (one block per partition of 256 tokens plus a
/// merge kernel), with a runtime switch that plants one bug. Simple on purpose: correctness of
/// the control variants, not speed.
#include <cuda_runtime.h>

#include "planted_device.cuh"
#include "planted_kernels.h"

namespace pagecheck::verify::planted {
namespace {

constexpr int64_t kSharedFloats = 12 * 1024;  // 48 KiB of dynamic shared memory

/// Context length the (possibly buggy) kernel uses for sequence `seq`.
__device__ int64_t used_context(const AttentionParams& a, Bug bug, int64_t seq) {
  int64_t ctx = a.row.context_lens[seq];
  if (bug == Bug::kContextOffByOne) ctx -= 1;
  if (bug == Bug::kSkipLastPartialBlock) ctx = ctx / a.row.block_size * a.row.block_size;
  return ctx;
}

/// First block-table entry of sequence `seq`: row `seq` at the row stride, or where a planted
/// bug looks for it (rows of ceil(max_context_len / block_size) or of max_blocks_per_seq).
__device__ int64_t table_row(const AttentionParams& a, Bug bug, int64_t seq) {
  if (bug == Bug::kOtherSeqBlockTableRow) {
    return seq * ((a.max_context_len + a.row.block_size - 1) / a.row.block_size);
  }
  if (bug == Bug::kTableStrideFromWidth) return seq * a.max_blocks_per_seq;
  return seq * a.row.block_table_stride;
}

template <typename T>
__device__ float cache_load(const void* base, int64_t offset, Bug bug) {
  return load<T>(base, bug == Bug::kOffset32 ? wrap32(offset) : offset);
}

/// One block computes tokens [part * part_len, ...) of one (head, seq). With split == false the
/// whole context is one partition and the block writes the output; otherwise it writes its
/// partition's max, sum and normalized output to the workspace.
template <typename T>
__global__ void attention_kernel(const AttentionParams a, Bug bug, bool split, int64_t part_len,
                                 int64_t max_parts, float* ws_max, float* ws_sum, float* ws_out) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  const int64_t head = blockIdx.x, seq = blockIdx.y, part = blockIdx.z;
  const int64_t hs = a.row.head_size, bs = a.row.block_size;
  const int64_t ctx = used_context(a, bug, seq);
  const int64_t begin = part * part_len;
  // Partitions past the context are never merged. kPartitionsFromBound: every sequence has the
  // bound's partitions, so an empty one runs too (max -inf, sum 0, output 0 / 0).
  if (split && begin >= ctx && bug != Bug::kPartitionsFromBound) return;
  const int64_t end = split && begin + part_len < ctx ? begin + part_len : ctx;
  float* q = smem;
  float* logits = smem + hs;

  const int64_t group = a.row.num_heads / a.row.num_kv_heads;
  // kGqaGroupLe8: the query heads of a kv head go to kGqaSlots fixed slots; in a larger group
  // the heads past the last slot get no block and are never written.
  if (bug == Bug::kGqaGroupLe8 && head % group >= kGqaSlots) return;
  const int64_t kv = bug == Bug::kWrongKvHeadGqa ? head % a.row.num_kv_heads : head / group;
  const int32_t* table = a.row.block_table + table_row(a, bug, seq);

  // 1. The query head into shared memory.
  const T* query = static_cast<const T*>(a.row.query) + seq * a.row.query_stride_token +
                   head * a.row.query_stride_head;
  if (bug == Bug::kMissingSyncthreads) {
    // Poison the shared query, then let only the last warp load it, late, and nobody wait.
    for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) q[d] = NAN;
    __syncthreads();
    if (threadIdx.x / 32 == blockDim.x / 32 - 1) {
      __nanosleep(100000);
      for (int64_t d = threadIdx.x % 32; d < hs; d += 32) q[d] = to_float(query[d]);
    }
  } else {
    for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) q[d] = to_float(query[d]);
    __syncthreads();
  }

  // 2. Logits of this block's tokens.
  float scale = a.row.scale;
  if (bug == Bug::kScaleTwice) scale = a.row.scale * a.row.scale;
  if (bug == Bug::kScaleMissing) scale = 1.f;
  const float slope = a.row.alibi_slopes != nullptr ? a.row.alibi_slopes[head] : 0.f;
  // kFiniteMaskSentinel: the softmax runs over whole blocks, the slots past the context with
  // the finite logit kMaskSentinel instead of none (their values count as 0, as the value loop
  // below stops at the context): they take the weight once every real logit is below it.
  const int64_t masked_end = bug == Bug::kFiniteMaskSentinel ? (end + bs - 1) / bs * bs : end;
  float local_max = -INFINITY;
  for (int64_t t = begin + threadIdx.x; t < masked_end; t += blockDim.x) {
    if (t >= end) {
      local_max = fmaxf(local_max, kMaskSentinel);
      continue;
    }
    const int64_t block = table[t / bs], slot = t % bs;
    float dot = 0.f;
    for (int64_t d = 0; d < hs; ++d) {
      dot +=
          q[d] * cache_load<T>(a.row.key_cache, cache_offset(a.row.key, block, kv, slot, d), bug);
    }
    const float logit = scale * dot + slope * static_cast<float>(t - ctx + 1);
    logits[t - begin] = logit;
    local_max = fmaxf(local_max, logit);
  }
  const float max_logit = block_reduce(local_max, true, scratch);

  // 3. Softmax weights (unnormalized) and their sum.
  float local_sum = 0.f;
  for (int64_t t = begin + threadIdx.x; t < masked_end; t += blockDim.x) {
    const float e = expf((t < end ? logits[t - begin] : kMaskSentinel) - max_logit);
    if (t < end) logits[t - begin] = e;
    local_sum += e;
  }
  const float sum = block_reduce(local_sum, false, scratch);  // also orders the logits writes

  // 4. Weighted values: one thread per output dimension.
  if (bug == Bug::kAtomicValueRace) {
    // Planted race: every (token, dim) product is added with a shared-memory atomicAdd, so the
    // order of the additions to one dimension follows the warps' progress, which changes from
    // launch to launch. Right up to float32 rounding every time; the last bits vary.
    float* acc = q;  // the query is no longer read (block_reduce above synchronized)
    for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) acc[d] = 0.f;
    __syncthreads();
    for (int64_t i = threadIdx.x; i < (end - begin) * hs; i += blockDim.x) {
      const int64_t t = begin + i / hs, d = i % hs;
      const int64_t block = table[t / bs], slot = t % bs;
      atomicAdd(&acc[d], logits[t - begin] *
                             cache_load<T>(a.row.value_cache,
                                           cache_offset(a.row.value, block, kv, slot, d), bug));
    }
    __syncthreads();
    T* out = static_cast<T*>(a.out) + seq * a.out_stride_token + head * a.out_stride_head;
    for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) out[d] = from_float<T>(acc[d] / sum);
    return;  // one-pass kernel only (registered with split = false)
  }
  const int64_t stop = bug == Bug::kZeroWeightNan ? (end + bs - 1) / bs * bs : end;
  for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) {
    float acc = 0.f;
    for (int64_t t = begin; t < stop; ++t) {
      const float w = t < end ? logits[t - begin] : 0.f;  // 0 x poison past the context
      const int64_t block = table[t / bs], slot = t % bs;
      acc +=
          w * cache_load<T>(a.row.value_cache, cache_offset(a.row.value, block, kv, slot, d), bug);
    }
    const float o = acc / sum;
    if (split) {
      ws_out[((seq * a.row.num_heads + head) * max_parts + part) * hs + d] = o;
    } else {
      T* out = static_cast<T*>(a.out) + seq * a.out_stride_token + head * a.out_stride_head;
      out[d] = from_float<T>(o);
    }
  }
  if (split && threadIdx.x == 0) {
    ws_max[(seq * a.row.num_heads + head) * max_parts + part] = max_logit;
    ws_sum[(seq * a.row.num_heads + head) * max_parts + part] = sum;
  }
}

/// Merges the partitions of one (head, seq): weights sum_j * exp(max_j - max), or (planted
/// bug) sum_j alone. kPartitionsFromBound merges the bound's partitions (max_parts), empty
/// ones included.
template <typename T>
__global__ void merge_kernel(const AttentionParams a, Bug bug, int64_t part_len, int64_t max_parts,
                             const float* ws_max, const float* ws_sum, const float* ws_out) {
  const int64_t head = blockIdx.x, seq = blockIdx.y, hs = a.row.head_size;
  const int64_t ctx = used_context(a, bug, seq);
  const int64_t parts =
      bug == Bug::kPartitionsFromBound ? max_parts : (ctx + part_len - 1) / part_len;
  const int64_t base = (seq * a.row.num_heads + head) * max_parts;
  float global = -INFINITY;
  for (int64_t j = 0; j < parts; ++j) global = fmaxf(global, ws_max[base + j]);
  float total = 0.f;
  for (int64_t j = 0; j < parts; ++j) {
    total += bug == Bug::kPartitionMaxOnly ? ws_sum[base + j]
                                           : ws_sum[base + j] * expf(ws_max[base + j] - global);
  }
  T* out = static_cast<T*>(a.out) + seq * a.out_stride_token + head * a.out_stride_head;
  for (int64_t d = threadIdx.x; d < hs; d += blockDim.x) {
    float o = 0.f;
    for (int64_t j = 0; j < parts; ++j) {
      const float w = bug == Bug::kPartitionMaxOnly
                          ? ws_sum[base + j]
                          : ws_sum[base + j] * expf(ws_max[base + j] - global);
      o += w * ws_out[(base + j) * hs + d];
    }
    out[d] = from_float<T>(o / total);
  }
}

int64_t max_partitions(const AttentionParams& a) {
  return (a.max_context_len + kPlantedPartition - 1) / kPlantedPartition;
}

template <typename T>
const char* launch(const AttentionParams& a, Bug bug, bool split, void* workspace,
                   cudaStream_t stream) {
  const int64_t part_len = split ? kPlantedPartition : a.max_context_len;
  const int64_t parts = split ? max_partitions(a) : 1;
  const std::size_t shared = static_cast<std::size_t>(a.row.head_size + part_len) * sizeof(float);
  const dim3 grid(static_cast<unsigned>(a.row.num_heads), static_cast<unsigned>(a.row.num_seqs),
                  static_cast<unsigned>(parts));
  float* ws = static_cast<float*>(workspace);
  const int64_t slots = a.row.num_seqs * a.row.num_heads * parts;
  float* ws_max = split ? ws : nullptr;
  float* ws_sum = split ? ws + slots : nullptr;
  float* ws_out = split ? ws + 2 * slots : nullptr;
  attention_kernel<T><<<grid, kPlantedThreads, shared, stream>>>(a, bug, split, part_len, parts,
                                                                 ws_max, ws_sum, ws_out);
  if (cudaGetLastError() != cudaSuccess) return "planted attention kernel launch failed";
  if (split) {
    const dim3 merge_grid(static_cast<unsigned>(a.row.num_heads),
                          static_cast<unsigned>(a.row.num_seqs));
    merge_kernel<T><<<merge_grid, kPlantedThreads, 0, stream>>>(a, bug, kPlantedPartition, parts,
                                                                ws_max, ws_sum, ws_out);
    if (cudaGetLastError() != cudaSuccess) return "planted merge kernel launch failed";
  }
  return "";
}

}  // namespace

size_t planted_attention_workspace(const AttentionParams& a, bool split) {
  if (!split) return 0;
  const int64_t slots = a.row.num_seqs * a.row.num_heads * max_partitions(a);
  return static_cast<size_t>(slots * (2 + a.row.head_size)) * sizeof(float);
}

int64_t planted_max_context() {
  return kSharedFloats - 256;
}

const char* launch_planted_attention(const AttentionParams& a, Bug bug, bool split, void* workspace,
                                     void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (a.row.dtype) {
    case PC_DTYPE_FLOAT32:
      return launch<float>(a, bug, split, workspace, s);
    case PC_DTYPE_FLOAT16:
      return launch<__half>(a, bug, split, workspace, s);
    case PC_DTYPE_BFLOAT16:
      return launch<__nv_bfloat16>(a, bug, split, workspace, s);
    default:
      return "unsupported dtype";
  }
}

}  // namespace pagecheck::verify::planted
