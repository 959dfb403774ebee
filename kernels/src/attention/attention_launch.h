#pragma once
/// Launchers of the paged-attention kernels, one per (dtype, head size, tile, variant); BLOCK_SIZE
/// is the tile, a cache block holds 2^params.tile_shift of them (attention_shapes.h). They are
/// explicitly instantiated in the generated attention_<dtype>_h<N>.cu files only (see
/// pagecheck/attention_extern.h); everything else sees these declarations.
#include <cuda_runtime_api.h>

#include "attention/attention_params.h"
#include "common/kernel_status.h"

namespace pagecheck::kernels {

/// v1: one thread block per (query row, head) over the row's whole attended range. SHARED_Q selects
/// the block-wide shared-memory query load (v1_shared_q) over per-thread-group loads (v1_baseline).
/// Enqueues on `stream`, never synchronizes.
template <typename T, int HEAD_SIZE, int BLOCK_SIZE, bool SHARED_Q>
KernelStatus launch_attention_v1(const AttentionParams& params, cudaStream_t stream);

/// v2_split: the partition kernel (one block per (query row, head, partition)) then the
/// reduction kernel. params.partition_* must point
/// into a workspace of attention_v2_workspace_bytes().
template <typename T, int HEAD_SIZE, int BLOCK_SIZE>
KernelStatus launch_attention_v2(const AttentionParams& params, cudaStream_t stream);

}  // namespace pagecheck::kernels
