#pragma once
// A gather kernel "from another codebase": its own launcher, its own argument order, byte-wise
// element handling and int sizes. The pagecheck adapter in example_gather_plugin.cpp translates
// pc_gather_args into this call.
#include <cuda_runtime.h>

#include <cstdint>

namespace othercodebase {

/// One cache tensor in this codebase's own terms (element strides): element (block, head,
/// slot, dim) is at block*block + head*head + slot*slot + (dim / split)*group + (dim % split)*dim.
struct TensorGeometry {
  int64_t block, head, slot, group, dim;  ///< strides
  int64_t split;                          ///< dims per group
};

/// Paged-cache geometry: the key and value tensors and the slots per block.
struct CacheGeometry {
  TensorGeometry key;    ///< key tensor
  TensorGeometry value;  ///< value tensor
  int block_size;        ///< slots per block
};

/// Copies K and V of every token whose slot is not -1 from the paged cache into the outputs.
/// Argument order is deliberately different from pagecheck's: outputs first, then the stream.
cudaError_t gather_kv_launch(void* key_out, void* value_out, int64_t out_key_token_stride,
                             int64_t out_key_head_stride, int64_t out_value_token_stride,
                             int64_t out_value_head_stride, cudaStream_t stream,
                             const void* key_cache, const void* value_cache,
                             const CacheGeometry& geometry, const int64_t* slots, int num_tokens,
                             int num_heads, int head_dim, int element_bytes);

}  // namespace othercodebase
