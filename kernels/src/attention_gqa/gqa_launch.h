#pragma once
/// Launchers of v3_gqa, one per (head size, rows per block). They are explicitly instantiated
/// in the generated gqa_h<N>.cu files only (kernels/cmake/kernel_instantiations.cmake).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_gqa/gqa_params.h"
#include "common/kernel_status.h"

namespace pagecheck::kernels {

/// Enqueues the partition kernel and, when params.max_partitions > 1, the merge kernel as its
/// programmatic dependent; never synchronizes.
template <int HEAD, int ROWS>
KernelStatus launch_gqa(const GqaParams& params, cudaStream_t stream);
/// The same with the tensor-core partition kernel (gqa_tc_kernel.cuh) for queries of T (__half
/// or __nv_bfloat16) on a cache of KV (T, or uint8_t for fp8 codes), ROWS (8 or 16) rows a
/// chunk.
template <int HEAD, int ROWS, class T, class KV>
KernelStatus launch_gqa_tc(const GqaParams& params, cudaStream_t stream);

}  // namespace pagecheck::kernels
