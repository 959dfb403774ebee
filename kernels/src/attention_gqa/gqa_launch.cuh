#pragma once
/// Definition of the v3_gqa launcher; included only by the generated instantiation files.
#include <cuda_runtime.h>

#include "attention_gqa/gqa_kernel.cuh"
#include "attention_gqa/gqa_launch.h"

namespace pagecheck::kernels {

template <int HEAD, int ROWS>
KernelStatus launch_gqa(const GqaParams& p, cudaStream_t stream) {
  using Tr = gqa::GqaTraits<HEAD, ROWS>;
  auto* kernel = &gqa::gqa_partition_kernel<HEAD, ROWS>;
  const int smem = static_cast<int>(Tr::kSmemBytes);
  if (smem > 48 * 1024) {
    PAGECHECK_RETURN_IF_CUDA_FAILED(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  const dim3 grid(static_cast<unsigned>(p.num_kv_heads * p.row_chunks),
                  static_cast<unsigned>(p.num_seqs), static_cast<unsigned>(p.max_partitions));
  kernel<<<grid, Tr::kThreads, static_cast<size_t>(smem), stream>>>(p);
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("gqa_partition_kernel<v3_gqa> launch");
  if (p.max_partitions <= 1) return KernelStatus::success();  // every row written directly

  // The merge is a programmatic dependent of the partition kernel on devices that have it
  // (compute capability >= 9.0): its blocks are scheduled early and wait in griddepcontrol.wait.
  int device = 0, major = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(cudaGetDevice(&device));
  PAGECHECK_RETURN_IF_CUDA_FAILED(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(p.num_kv_heads * p.row_chunks),
                        static_cast<unsigned>(p.num_seqs), 1);
  config.blockDim = dim3(128, 1, 1);
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
      cudaLaunchKernelEx(&config, &gqa::gqa_merge_kernel<HEAD>, p, ROWS));
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("gqa_merge_kernel<v3_gqa> launch");
  return KernelStatus::success();
}

/// Explicit instantiations of one head size (used by the generated files).
#define PAGECHECK_GQA_INSTANTIATE(HEAD)                                      \
  template KernelStatus launch_gqa<HEAD, 4>(const GqaParams&, cudaStream_t); \
  template KernelStatus launch_gqa<HEAD, 8>(const GqaParams&, cudaStream_t);

}  // namespace pagecheck::kernels
