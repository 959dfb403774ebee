#pragma once
/// Device inputs of one bench shape, built directly on the GPU: random caches, query and K/V
/// (never zeros), block tables drawn as a random permutation of a realistic pool, slot mappings
/// that fill randomly chosen blocks in order, the shape's page layout and KV dtype (fp8 caches
/// with per-tensor scales of 1), window and query length, and the family's ABI v2 args struct
/// pointing at them (from the shape's problem descriptors through pagecheck/verify/abi_args.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "device_buffer.h"
#include "pagecheck/bench/shapes.h"
#include "pagecheck/plugin.h"

namespace pagecheck::bench::detail {

/// Device tensors of one problem plus the pc_*_args a variant launches with.
class DeviceProblem {
 public:
  /// Allocates and fills every tensor for `shape` (synchronizes). Throws CudaError when the
  /// device runs out of memory (the message names the allocation size).
  DeviceProblem(const BenchShape& shape, uint64_t seed, cudaStream_t stream);

  /// Pointer to the family's version-2 args struct (pc_paged_attention_args, pc_gather_args or
  /// pc_reshape_and_cache_args), valid while this object lives.
  const void* args() const;
  /// Sets every output byte to 0xFF (NaN in every dtype); enqueued on `stream`.
  void poison_outputs(cudaStream_t stream);
  /// After one launch on poisoned outputs: "" when exactly the elements the kernel must write
  /// are finite (attention, gather: every output element; reshape_and_cache: the tokens' cache
  /// slots and nothing else), else what is wrong. Synchronizes.
  std::string check_outputs(cudaStream_t stream);

 private:
  BenchShape shape_;
  DeviceBuffer key_cache_, value_cache_;  ///< paged caches
  DeviceBuffer key_, value_;              ///< contiguous K/V (copy families)
  DeviceBuffer query_, out_;              ///< attention query and output
  DeviceBuffer block_table_, context_lens_, slot_mapping_;
  DeviceBuffer query_start_;        ///< attention with query_len > 1
  DeviceBuffer k_scale_, v_scale_;  ///< fp8 caches: per-tensor scales (1)
  DeviceBuffer counter_;            ///< output-check counter
  pc_paged_attention_args attention_{};
  pc_gather_args gather_{};
  pc_reshape_and_cache_args reshape_{};
  int64_t key_span_ = 0, value_span_ = 0, token_elems_ = 0;
  /// Non-finite elements among `count` elements of `dtype` at `data`.
  int64_t count_nonfinite_elements(const void* data, int64_t count, DType dtype,
                                   cudaStream_t stream);
};

}  // namespace pagecheck::bench::detail
