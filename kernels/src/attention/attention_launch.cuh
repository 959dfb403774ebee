#pragma once
/// Definitions of the attention launchers; included only by the generated instantiation files.
#include <cuda_runtime.h>

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
KernelStatus launch_attention_v1(const AttentionParams& params, cudaStream_t stream) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  auto* kernel = &paged_attention_kernel<T, HEAD_SIZE, BLOCK_SIZE, SHARED_Q, false>;
  const int64_t smem = attention_v1_dynamic_smem(params.max_context_len);
  KernelStatus st = detail::allow_dynamic_smem(kernel, smem);
  if (!st.ok()) return st;
  const dim3 grid(params.num_heads, params.num_seqs, 1);
  kernel<<<grid, Tr::kThreads, static_cast<size_t>(smem), stream>>>(params);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED(SHARED_Q ? "paged_attention_kernel<v1_shared_q> launch"
                                             : "paged_attention_kernel<v1_baseline> launch");
  return KernelStatus::success();
}

template <typename T, int HEAD_SIZE, int BLOCK_SIZE>
KernelStatus launch_attention_v2(const AttentionParams& params, cudaStream_t stream) {
  using Tr = AttentionTraits<T, HEAD_SIZE, BLOCK_SIZE>;
  if (params.max_num_partitions == 1) {
    // Every context fits in one partition: the reduction would only copy. The single-pass
    // kernel (the v1_shared_q code) computes the same softmax in one launch; the workspace is
    // left unused.
    return launch_attention_v1<T, HEAD_SIZE, BLOCK_SIZE, true>(params, stream);
  }
  const dim3 grid(params.num_heads, params.num_seqs, params.max_num_partitions);
  paged_attention_kernel<T, HEAD_SIZE, BLOCK_SIZE, true, true>
      <<<grid, Tr::kThreads, static_cast<size_t>(attention_v2_dynamic_smem()), stream>>>(params);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("paged_attention_kernel<v2_split> launch");

  auto* reduce = &paged_attention_reduce_kernel<T, HEAD_SIZE>;
  const int64_t reduce_smem = attention_reduce_dynamic_smem(params.max_num_partitions);
  KernelStatus st = detail::allow_dynamic_smem(reduce, reduce_smem);
  if (!st.ok()) return st;
  const dim3 reduce_grid(params.num_heads, params.num_seqs, 1);
  reduce<<<reduce_grid, 128, static_cast<size_t>(reduce_smem), stream>>>(params);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("paged_attention_reduce_kernel<v2_split> launch");
  return KernelStatus::success();
}

}  // namespace pagecheck::kernels
