#pragma once
/// Definitions of the attention launchers; included only by the generated instantiation files.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

#include "attention/attention_kernel.cuh"
#include "attention/attention_launch.h"

namespace pagecheck::kernels {

namespace detail {
/// Raises a kernel's dynamic shared-memory limit when it needs more than the default 48 KB.
template <typename Kernel>
KernelStatus allow_dynamic_smem(Kernel kernel, int64_t bytes) {
  if (bytes > 48 * 1024) {
    PAGECHECK_RETURN_IF_CUDA_FAILED(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
  return KernelStatus::success();
}
}  // namespace detail

template <typename T, int HEAD_SIZE, int BLOCK_SIZE, bool SHARED_Q>
KernelStatus launch_attention_v1(const AttentionParams& host_params, cudaStream_t stream) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  auto* kernel = &paged_attention_kernel<T, HEAD_SIZE, BLOCK_SIZE, SHARED_Q, false>;
  AttentionParams params = host_params;
  params.tile_size = BLOCK_SIZE;
  // Logits for a row's whole range: at most max_span tokens from the tile-aligned start.
  const int64_t smem = attention_v1_dynamic_smem(params.max_span);
  KernelStatus st = detail::allow_dynamic_smem(kernel, smem);
  if (!st.ok()) return st;
  const dim3 grid(static_cast<unsigned>(params.num_heads * params.max_query_len),
                  static_cast<unsigned>(params.num_seqs), 1);
  kernel<<<grid, Tr::kThreads, static_cast<size_t>(smem), stream>>>(params);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED(SHARED_Q ? "paged_attention_kernel<v1_shared_q> launch"
                                             : "paged_attention_kernel<v1_baseline> launch");
  return KernelStatus::success();
}

namespace detail {
/// Thread blocks of `kernel` (`threads` threads, `smem` dynamic bytes) resident on the current
/// device at once; computed once per kernel and device (the cache is a static of each
/// instantiation: every kernel of one signature has the same function-pointer type, so the
/// kernel itself is the template argument). 0 when it cannot be queried.
template <auto kernel>
int64_t resident_blocks(int threads, int64_t smem) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int64_t> cache[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return 0;
  int64_t slots = cache[device].load(std::memory_order_relaxed);
  if (slots > 0) return slots;
  int per_sm = 0, sms = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads,
                                                    static_cast<size_t>(smem)) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  slots = int64_t{per_sm} * sms;
  cache[device].store(slots, std::memory_order_relaxed);
  return slots;
}

/// True on devices with programmatic dependent launch (compute capability 9.0 or newer).
inline bool dependent_launch_supported() {
  int device = 0, major = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         major >= 9;
}

}  // namespace detail

template <typename T, int HEAD_SIZE, int BLOCK_SIZE>
KernelStatus launch_attention_v2(const AttentionParams& host_params, cudaStream_t stream) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  constexpr auto kernel = &paged_attention_kernel<T, HEAD_SIZE, BLOCK_SIZE, true, true>;
  const int64_t slots =
      detail::resident_blocks<kernel>(Tr::kThreads, attention_v2_dynamic_smem(kMaxPartitionSize));
  const int64_t rows =
      int64_t{host_params.num_seqs} * host_params.num_heads * host_params.max_query_len;
  // Partition sizes from the grid (choose_partition_size) over the longest row range (the
  // context, or the window: max_span), within the partitions the workspace holds (the host's
  // max_num_partitions: those of kSmallPartitionSize on small grids, else of kPartitionSize,
  // which also holds the fewer partitions of a larger size). Also when every range fits in one
  // partition: on the H200 this kernel beat the single-pass v1 kernel on every 128-token shape
  // of the bench sweep (docs/performance.md).
  AttentionParams params = host_params;
  params.tile_size = BLOCK_SIZE;
  params.partition_size =
      choose_partition_size(rows, params.max_span, slots, host_params.max_num_partitions);
  params.max_num_partitions = static_cast<int32_t>(
      std::max<int64_t>(1, partitions_over(params.max_span, params.partition_size)));
  const dim3 grid(static_cast<unsigned>(params.num_heads * params.max_query_len),
                  static_cast<unsigned>(params.num_seqs),
                  static_cast<unsigned>(params.max_num_partitions));
  kernel<<<grid, Tr::kThreads,
           static_cast<size_t>(attention_v2_dynamic_smem(params.partition_size)), stream>>>(params);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("paged_attention_kernel<v2_split> launch");
  // One partition per row: the partition kernel wrote the output and folded the sink in, as v1
  // does; no reduction launch and no workspace round trip (docs/performance.md).
  if (params.max_num_partitions == 1) return KernelStatus::success();

  // The reduction is launched as a programmatic dependent of the partition kernel where the
  // device has it: its blocks are scheduled while the partition kernel runs and wait in
  // griddepcontrol.wait, which hides the second launch's latency.
  auto* reduce = &paged_attention_reduce_kernel<T, HEAD_SIZE>;
  const int64_t reduce_smem = attention_reduce_dynamic_smem(params.max_num_partitions);
  KernelStatus st = detail::allow_dynamic_smem(reduce, reduce_smem);
  if (!st.ok()) return st;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(params.num_heads * params.max_query_len),
                        static_cast<unsigned>(params.num_seqs), 1);
  config.blockDim = dim3(128, 1, 1);
  config.dynamicSmemBytes = static_cast<size_t>(reduce_smem);
  config.stream = stream;
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  if (detail::dependent_launch_supported()) {
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  PAGECHECK_RETURN_IF_CUDA_FAILED(cudaLaunchKernelEx(&config, reduce, params));
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("paged_attention_reduce_kernel<v2_split> launch");
  return KernelStatus::success();
}

}  // namespace pagecheck::kernels
