#pragma once
/// The key_cache / value_cache arguments of every page layout: their shapes, reading them into
/// a ref::PagedCacheLayout with raw storage, and the numpy form of a layout's tensors.
#include <cstdint>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>

#include "pagecheck/reference/layout.h"

namespace pagecheck::python {

namespace py = pybind11;

/// The shapes (in `dims` text) of a cache tensor of page layout `kind`: x-split key [num_blocks,
/// num_kv_heads, head_size / x, block_size, x], x-split value [num_blocks, num_kv_heads,
/// head_size, block_size], NHD [num_blocks, block_size, num_kv_heads, head_size], HND
/// [num_blocks, num_kv_heads, block_size, head_size].
const char* cache_dims(ref::CacheKind kind, bool key);

/// A paged cache with its layout and both tensors' raw storage.
struct CacheTensors {
  ref::PagedCacheLayout layout;  ///< sizes, strides, dtype, kind (scale kind: none)
  std::vector<std::byte> key;    ///< raw storage, layout.key_span() elements
  std::vector<std::byte> value;  ///< raw storage, layout.value_span() elements
};

/// Reads the key_cache and value_cache arrays of page layout `kind` and dtype `kv_dtype` (x =
/// 16 / element size for x-split keys) with their strides, or both as packed copies when their
/// strides are not a valid cache layout. Throws ValueError naming key_cache or value_cache
/// when the shapes disagree with each other, with x, or with `head_size` (>= 0: the tokens').
CacheTensors read_cache(const py::array& key, const py::array& value, ref::CacheKind kind,
                        DType kv_dtype, int64_t head_size);

/// The numpy shape and element strides of the key (`key`) or value tensor of `layout`, in the
/// array form of its kind (cache_dims).
std::pair<std::vector<int64_t>, std::vector<int64_t>> cache_array(const ref::PagedCacheLayout& c,
                                                                  bool key);

}  // namespace pagecheck::python
