#pragma once
/// CPU simulations of the planted bug classes of issue 13 §6 (internal to the "sim" backend,
/// sim_backend.cpp): each one reproduces, from the reference, what the planted CUDA variant of
/// the same class (verify/planted/src/planted_attention.cu, planted_copies.cu) outputs. The
/// attention ones are decode simulations (one query row per sequence, as their variants
/// declare) and, like the planted kernels, honour ALiBi; an element a kernel never writes, or
/// computes from poison, is NaN.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::check {

/// The planted classes' numbers (the planted kernels' kOneBlockVectors, kMaskSentinel and
/// kGqaSlots, verify/planted/src/planted_kernels.h).
inline constexpr int64_t kSimOneBlockVectors = 1024;  ///< threads of a token's one block
inline constexpr double kSimMaskSentinel = -1.0e4;    ///< finite logit of a masked slot
inline constexpr int64_t kSimGqaSlots = 8;            ///< query-head slots per kv head

/// gather_cached_kv whose token gets one block of at most kSimOneBlockVectors threads, one
/// 16-byte vector each, no loop: of each token's num_kv_heads * head_size elements (head-major)
/// those past kSimOneBlockVectors * x (x = dtype_x(dtype)) stay as they were.
void sim_gather_one_block_per_token(ref::CacheCopyProblem& p);
/// reshape_and_cache with the same cap: the cache slots of the elements past it keep their old
/// contents.
void sim_reshape_one_block_per_token(ref::CacheCopyProblem& p);

/// Block-table rows addressed with max_blocks_per_seq instead of the row stride: sequence s
/// reads entries [s * width, (s + 1) * width) of the strided table the kernel receives (other
/// rows, or their padding block). A sequence whose read entries leave the pool is NaN.
std::vector<double> sim_table_stride_from_width(const ref::PagedAttentionProblem& p);
/// Softmax over whole blocks with the slots past the context given the finite logit
/// kSimMaskSentinel and value 0: with n masked slots and the reference's lse the output is
/// out / (1 + n * exp(kSimMaskSentinel - lse)), which differs only when the logits lie near or
/// below the sentinel.
std::vector<double> sim_finite_mask_sentinel(const ref::PagedAttentionProblem& p);
/// Split-K with `partition` tokens per partition whose partition count comes from the host
/// bound (batch.host_max_context_len()) for every sequence: a sequence with fewer partitions
/// than the bound merges empty ones (0 / 0), its output is NaN.
std::vector<double> sim_partitions_from_bound(const ref::PagedAttentionProblem& p,
                                              int64_t partition);
/// A kv head serves kSimGqaSlots query heads: head h with h % group >= kSimGqaSlots is never
/// written (NaN).
std::vector<double> sim_gqa_group_le8(const ref::PagedAttentionProblem& p);

}  // namespace pagecheck::verify::check
