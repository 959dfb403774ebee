#pragma once
/// Small argument checks shared by the variants' can_implement functions. Each returns a
/// KernelStatus whose message names the offending field. The version-2 argument structs are
/// read with pagecheck::abi::read (pagecheck/plugin_read.h) before these run.
#include <cstdint>
#include <string>

#include "common/kernel_status.h"

namespace pagecheck::kernels {

/// Invalid when `ptr` is NULL.
KernelStatus require_pointer(const void* ptr, const char* name);
/// Unsupported when `ptr` is not 16-byte aligned (`why` says which access needs it).
KernelStatus require_aligned16(const void* ptr, const char* name, const char* why);
/// Invalid when `stride` < `min_value`.
KernelStatus require_min(int64_t value, int64_t min_value, const char* name);
/// Unsupported when `stride` is not a multiple of `x` elements (16-byte vector accesses).
KernelStatus require_vector_stride(int64_t stride, int64_t x, const char* name);
/// Invalid when a struct's struct_size is 0 (the writer did not set it; `name` is the field,
/// e.g. "args.batch").
KernelStatus require_struct_size(uint32_t struct_size, const char* name);

/// The cache subset pagecheck's simple kernels handle (built-in and planted): unsupported for a
/// kind other than x-split, a dtype the kernels are not compiled for (fp8), a cache dtype other
/// than the token dtype `dtype`, scales, or combined K/V.
KernelStatus check_plain_cache(const pc_kv_cache& cache, pc_dtype dtype);
/// Decode only: unsupported for query_start != NULL, max_query_len > 1, sinks, a window or a
/// soft-cap; invalid when num_query_tokens differs from num_seqs. (Causality does not matter
/// with one query token per sequence. Context length 0 cannot be seen on the host: the
/// variants declare PC_CONTEXT0_UNSUPPORTED, so the harness never passes it.)
KernelStatus check_decode_batch(const pc_ragged_batch& batch,
                                const pc_attention_features& features);
/// check_plain_cache, then the built-in kernels' x-split layout: key dim groups of x = 16 /
/// element size (invalid otherwise) with unit dim stride, values with unit slot stride and no
/// dim groups, positive sizes, head size a multiple of x. (Which head and block sizes a variant
/// takes is the caller's check.)
KernelStatus check_cache_shape(const pc_kv_cache& cache, pc_dtype dtype);
/// The device's opt-in shared memory per block (bytes): device->max_shared_per_block when the
/// host filled it, else queried from the current device (or a CUDA error status).
KernelStatus max_shared_memory_per_block(const pc_device_info* device, int64_t* bytes);
/// Unsupported when a thread block needs `need` bytes of shared memory, more than the device
/// allows (max_shared_memory_per_block): "<what> needs N bytes of shared memory per block, the
/// device allows L<advice>", where `what` names the argument that makes it so.
KernelStatus require_shared_memory(const pc_device_info* device, int64_t need,
                                   const std::string& what, const char* advice = "");
/// The attention call's pointers every variant dereferences (query, caches, block table,
/// context lengths, output: invalid when NULL) and its query / output strides (invalid < 1).
KernelStatus check_attention_pointers(const pc_paged_attention_args& args);

/// Reads the attention arguments at `args` into `out` (abi::read: a shorter struct of an older
/// writer is completed with defaults): invalid when `args` is NULL or its struct_size is 0.
KernelStatus read_attention_args(const pc_paged_attention_args* args, pc_paged_attention_args& out);
/// The attention call's sub-struct sizes (args.cache, args.batch, args.features): invalid when 0.
KernelStatus check_attention_structs(const pc_paged_attention_args& args);
/// The attention call's ragged batch and features, as every attention variant takes them (after
/// its cache checks, so cache.num_kv_heads and cache.block_size are >= 1 here as well). Invalid,
/// checked first: counts < 0 (heads, blocks per sequence < 1, and the two cache sizes), a
/// block-table row stride < max_blocks_per_seq, num_query_tokens != num_seqs without
/// query_start, num_heads not a multiple of cache.num_kv_heads, max_context_len beyond the
/// table's capacity, window < 0, a soft-cap not finite or < 0, a scale not finite. Then
/// unsupported (a valid call beyond the kernels): max_query_len > `max_query_len`, more than
/// 65535 sequences (grid y), max_context_len > 2^30 tokens.
KernelStatus check_attention_batch(const pc_paged_attention_args& args, int64_t max_query_len);

/// Runs the checks in order and returns the first failure (or success).
template <typename... Checks>
KernelStatus first_failure(const Checks&... checks) {
  KernelStatus result = KernelStatus::success();
  ((result.ok() ? (void)(result = checks) : (void)0), ...);
  return result;
}

}  // namespace pagecheck::kernels
