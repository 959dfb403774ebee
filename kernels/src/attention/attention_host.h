#pragma once
/// Host side of the paged-attention variants: argument checks, workspace size and launch
/// through the compile-time dispatch. Used by the C-ABI descriptors in builtin_variants.cpp.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/kernel_status.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// The three built-in paged-attention designs (docs/kernels.md).
enum class AttentionVariant : int {
  kV1Baseline = 0,  ///< one block per (query row, head), per-thread-group query loads
  kV1SharedQ = 1,   ///< one block per (query row, head), query loaded once into shared memory
  kV2Split = 2,     ///< partitions of kPartitionSize tokens + a reduction kernel
};

/// can_implement: OK, or why the variant cannot run `args` (field named in the message).
/// `device` (may be NULL: queried) gives the shared-memory limit.
KernelStatus check_attention(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args* args);
/// Workspace bytes `launch_attention` needs (0 for v1).
std::size_t attention_workspace_bytes(AttentionVariant variant,
                                      const pc_paged_attention_args* args);
/// Checks, then fills AttentionParams from the version-2 arguments and enqueues the kernel(s)
/// on `stream`; never synchronizes.
KernelStatus launch_attention(AttentionVariant variant, const pc_device_info* device,
                              const pc_paged_attention_args* args, void* workspace,
                              cudaStream_t stream);

/// The checks of check_attention on arguments already read (read_attention_args).
KernelStatus check_read_args(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args& args);
/// Workspace bytes of a call that check_read_args accepted.
std::size_t checked_attention_workspace(AttentionVariant variant,
                                        const pc_paged_attention_args& args);
/// launch_attention for arguments already read and accepted by check_read_args.
KernelStatus launch_checked_attention(AttentionVariant variant, const pc_paged_attention_args& args,
                                      void* workspace, cudaStream_t stream);

struct AttentionParams;
/// Compile-time dispatch over dtype, head size, tile (attention_tile) and variant
/// (attention_dispatch.cu).
KernelStatus dispatch_attention(AttentionVariant variant, pc_dtype dtype, int64_t head_size,
                                int64_t tile, const AttentionParams& params, cudaStream_t stream);

}  // namespace pagecheck::kernels
