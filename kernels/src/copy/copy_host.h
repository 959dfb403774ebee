#pragma once
/// Host side of the KV-cache copy variants: argument checks and launch.
#include <cuda_runtime_api.h>

#include "common/kernel_status.h"
#include "copy/copy_params.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// can_implement of a gather_cached_kv variant.
KernelStatus check_gather(CopyVariant variant, const pc_gather_args* args);
/// can_implement of a reshape_and_cache variant.
KernelStatus check_reshape(CopyVariant variant, const pc_reshape_and_cache_args* args);
/// Checks, then enqueues the gather kernel on `stream`; never synchronizes.
KernelStatus run_gather(CopyVariant variant, const pc_gather_args* args, cudaStream_t stream);
/// Checks, then enqueues the reshape kernel on `stream`; never synchronizes.
KernelStatus run_reshape(CopyVariant variant, const pc_reshape_and_cache_args* args,
                         cudaStream_t stream);

/// Kernel launchers (gather_kernels.cu, reshape_kernels.cu); `params` already checked and
/// built for `codec` (vector flags, lane order, unroll).
KernelStatus launch_gather(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& params,
                           cudaStream_t stream);
KernelStatus launch_reshape(CopyVariant variant, const CopyCodecKey& codec,
                            const CopyParams& params, cudaStream_t stream);

}  // namespace pagecheck::kernels
