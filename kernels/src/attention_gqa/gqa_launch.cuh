#pragma once
/// Definition of the v3_gqa launcher; included only by the generated instantiation files.
#include <cuda_runtime.h>

#include "attention_gqa/gqa_kernel.cuh"
#include "attention_gqa/gqa_launch.h"
#include "attention_gqa/gqa_tc_kernel.cuh"

namespace pagecheck::kernels {

/// Enqueues `partition` (grid kv heads x row chunks, sequences, partitions; `threads` per block,
/// `smem` bytes of dynamic shared memory) and, when there is more than one partition, the merge
/// of head size HEAD over `rows` rows per chunk (a warp per row) as its programmatic dependent.
template <int HEAD>
KernelStatus launch_partition_and_merge(void (*partition)(GqaParams), int threads, int smem,
                                        int rows, const char* what, const GqaParams& p,
                                        cudaStream_t stream) {
  if (smem > 48 * 1024) {
    PAGECHECK_RETURN_IF_CUDA_FAILED(
        cudaFuncSetAttribute(partition, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  const dim3 grid(static_cast<unsigned>(p.num_kv_heads * p.row_chunks),
                  static_cast<unsigned>(p.num_seqs), static_cast<unsigned>(p.grid_partitions));
  partition<<<grid, threads, static_cast<size_t>(smem), stream>>>(p);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED(what);
  if (p.max_partitions <= 1) return KernelStatus::success();  // every row written directly

  // The merge is a programmatic dependent of the partition kernel on devices that have it
  // (compute capability >= 9.0): its blocks are scheduled early and wait in griddepcontrol.wait.
  int device = 0, major = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(cudaGetDevice(&device));
  PAGECHECK_RETURN_IF_CUDA_FAILED(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaLaunchConfig_t config = {};
  config.gridDim =
      dim3(static_cast<unsigned>(p.num_kv_heads * p.row_chunks), static_cast<unsigned>(p.num_seqs),
           static_cast<unsigned>((rows + kGqaMergeWarps - 1) / kGqaMergeWarps));
  config.blockDim = dim3(kGqaMergeWarps * 32, 1, 1);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  if (major >= 9) {
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  PAGECHECK_RETURN_IF_CUDA_FAILED(
      cudaLaunchKernelEx(&config, &gqa::gqa_merge_kernel<HEAD>, p, rows));
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("gqa_merge_kernel<v3_gqa> launch");
  return KernelStatus::success();
}

template <int HEAD, int ROWS>
KernelStatus launch_gqa(const GqaParams& p, cudaStream_t stream) {
  static_assert(gqa::GqaTraits<HEAD, ROWS>::kThreads == 128, "the launch uses 128 threads");
  using Tr = gqa::GqaTraits<HEAD, ROWS>;
  return launch_partition_and_merge<HEAD>(&gqa::gqa_partition_kernel<HEAD, ROWS>, Tr::kThreads,
                                          static_cast<int>(Tr::kSmemBytes), ROWS,
                                          "gqa_partition_kernel<v3_gqa> launch", p, stream);
}

template <int HEAD, int ROWS, class T, class KV>
KernelStatus launch_gqa_tc(const GqaParams& p, cudaStream_t stream) {
  using Tr = gqa::GqaTcTraits<HEAD, sizeof(KV), ROWS>;
  return launch_partition_and_merge<HEAD>(&gqa::gqa_tc_partition_kernel<HEAD, ROWS, T, KV>,
                                          Tr::kThreads, static_cast<int>(Tr::kSmemBytes), Tr::kRows,
                                          "gqa_tc_partition_kernel<v3_gqa> launch", p, stream);
}

/// Explicit instantiations of one head size (used by the generated files).
#define PAGECHECK_GQA_TC_INSTANTIATE(HEAD, ROWS)                                                   \
  template KernelStatus launch_gqa_tc<HEAD, ROWS, __half, __half>(const GqaParams&, cudaStream_t); \
  template KernelStatus launch_gqa_tc<HEAD, ROWS, __nv_bfloat16, __nv_bfloat16>(const GqaParams&,  \
                                                                                cudaStream_t);     \
  template KernelStatus launch_gqa_tc<HEAD, ROWS, __half, uint8_t>(const GqaParams&,               \
                                                                   cudaStream_t);                  \
  template KernelStatus launch_gqa_tc<HEAD, ROWS, __nv_bfloat16, uint8_t>(const GqaParams&,        \
                                                                          cudaStream_t);
#define PAGECHECK_GQA_INSTANTIATE(HEAD)                                      \
  template KernelStatus launch_gqa<HEAD, 4>(const GqaParams&, cudaStream_t); \
  template KernelStatus launch_gqa<HEAD, 8>(const GqaParams&, cudaStream_t); \
  PAGECHECK_GQA_TC_INSTANTIATE(HEAD, 8)                                      \
  PAGECHECK_GQA_TC_INSTANTIATE(HEAD, 16)

}  // namespace pagecheck::kernels
