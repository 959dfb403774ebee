#pragma once
/// Host side of v3_gqa: argument checks, partition choice, workspace size and launch.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "attention_gqa/gqa_params.h"
#include "common/kernel_status.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// can_implement on arguments already read (read_attention_args): OK, or why v3_gqa cannot run
/// them (the message names the field). `device` (may be NULL: queried) gives the shared-memory
/// limit and the SM count.
KernelStatus check_gqa(const pc_device_info* device, const pc_paged_attention_args& args);
/// Workspace bytes launch_gqa_attention needs for `args` (accepted by check_gqa) on `device` (0
/// when every row fits in one partition).
std::size_t gqa_workspace_bytes(const pc_device_info* device, const pc_paged_attention_args& args);
/// Fills GqaParams from `args` (accepted by check_gqa) and enqueues the kernel(s) on `stream`;
/// never synchronizes.
KernelStatus launch_gqa_attention(const pc_device_info* device, const pc_paged_attention_args& args,
                                  void* workspace, cudaStream_t stream);

/// The loader mode for one cache tensor: 16-byte vectors along the dims or the slots where the
/// strides and `aligned16` (the tensor pointer) allow, else element by element.
GqaLoadMode gqa_load_mode(const pc_cache_strides& s, int64_t head_size, int64_t block_size,
                          int64_t element_bytes, bool aligned16);
/// True when `args` (already checked) runs on the tensor-core kernel: float16 / bfloat16
/// queries on a cache of the same dtype or of fp8, K with 16-byte vectors along the dims, V
/// along the dims or the slots.
bool gqa_uses_tensor_cores(const pc_paged_attention_args& args);

/// The launch geometry of a checked call (what workspace_bytes and the launch derive alone).
struct GqaLaunchShape {
  bool tensor_cores = false;    ///< the tensor-core kernel (gqa_uses_tensor_cores)
  int rows_per_block = 4;       ///< rows per thread block (4 or 8; on tensor cores 8 or 16)
  int64_t row_chunks = 1;       ///< blocks per (sequence, kv head) along the rows
  int32_t partition_size = 0;   ///< tokens per partition (0: too many partitions)
  int64_t partitions = 1;       ///< partitions of the longest context, >= 1
  int64_t grid_partitions = 1;  ///< grid z: `partitions`, or those one chunk's window span touches
  int64_t window = 0;           ///< the window passed to the kernels (0: it covers everything)
  int64_t smem_bytes = 0;       ///< the partition kernel's dynamic shared memory (gqa_kernel_facts)
};
/// The launch geometry of `args` on `device` (may be NULL: 132 SMs assumed).
GqaLaunchShape gqa_launch_shape(const pc_device_info* device, const pc_paged_attention_args& args);

/// Compile-time dispatch over head size and the kernel of `shape` (gqa_dispatch.cu): the
/// tensor-core kernel (float16 / bfloat16 params.io_dtype), or the CUDA-core kernel of
/// shape.rows_per_block rows.
KernelStatus dispatch_gqa(int64_t head_size, const GqaLaunchShape& shape, const GqaParams& params,
                          cudaStream_t stream);
/// What the host needs to know of the partition kernel that runs `shape` (its tensor-core
/// flag and rows per block) for a head size; tensor-core stages hold fp8 codes when `fp8`.
struct GqaKernelFacts {
  int64_t smem_bytes = 0;     ///< dynamic shared memory per block; 0: head size not compiled
  int64_t blocks_per_sm = 1;  ///< blocks per SM the partition rule aims at (>= 1)
};
/// The facts of one kernel (gqa_dispatch.cu): on tensor cores the rule aims at two blocks an
/// SM where the kernel keeps two resident (GqaTcTraits::kMinBlocksPerSm), one otherwise.
GqaKernelFacts gqa_kernel_facts(int64_t head_size, const GqaLaunchShape& shape, bool fp8);

}  // namespace pagecheck::kernels
