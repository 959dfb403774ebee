/// Paged-cache arguments into the reference's layout and raw storage (cache_args.h).
#include "cache_args.h"

#include <stdexcept>
#include <string>

#include "array_args.h"

namespace pagecheck::python {
namespace {

/// The strides of one cache tensor of `kind` read from an array (cache_dims order).
ref::CacheTensorStrides tensor_strides(ref::CacheKind kind, bool key, const StridedTensor& t,
                                       int64_t head_size) {
  const std::vector<int64_t>& s = t.strides;
  ref::CacheTensorStrides out;
  if (kind == ref::CacheKind::kXSplit && key) {  // [blocks, heads, head_size / x, bs, x]
    out = {s[0], s[1], s[3], s[2], s[4], t.shape[4]};
  } else if (kind == ref::CacheKind::kXSplit) {  // [blocks, heads, head_size, bs]
    out = {s[0], s[1], s[3], 0, s[2], head_size};
  } else if (kind == ref::CacheKind::kNHD) {  // [blocks, bs, heads, head_size]
    out = {s[0], s[2], s[1], 0, s[3], head_size};
  } else {  // HND: [blocks, heads, bs, head_size]
    out = {s[0], s[1], s[2], 0, s[3], head_size};
  }
  return out;
}

/// Sizes of a cache from its key array, checking the value array against them.
ref::CacheShape cache_shape(const StridedTensor& key, const StridedTensor& value,
                            ref::CacheKind kind, DType kv_dtype, int64_t head_size) {
  ref::CacheShape shape;
  std::vector<int64_t> want_value;
  if (kind == ref::CacheKind::kXSplit) {
    const int64_t x = dtype_x(kv_dtype);
    if (key.shape[4] != x) {
      throw py::value_error("key_cache: last dimension is " + std::to_string(key.shape[4]) +
                            ", but x = 16 bytes / element size = " + std::to_string(x) + " for " +
                            dtype_name(kv_dtype) + " (the key cache is " + cache_dims(kind, true) +
                            ")");
    }
    shape = {key.shape[0], key.shape[1], key.shape[2] * x, key.shape[3]};
    if (head_size >= 0 && shape.head_size != head_size) {
      throw py::value_error("key_cache: head_size / x = " + std::to_string(key.shape[2]) +
                            " gives head_size " + std::to_string(shape.head_size) +
                            ", but the head_size of the tokens is " + std::to_string(head_size));
    }
    want_value = {shape.num_blocks, shape.num_kv_heads, shape.head_size, shape.block_size};
  } else {
    const bool nhd = kind == ref::CacheKind::kNHD;
    shape = {key.shape[0], nhd ? key.shape[2] : key.shape[1], key.shape[3],
             nhd ? key.shape[1] : key.shape[2]};
    if (head_size >= 0 && shape.head_size != head_size) {
      throw py::value_error("key_cache: head_size " + std::to_string(shape.head_size) +
                            " differs from the head_size of the tokens, " +
                            std::to_string(head_size));
    }
    want_value = key.shape;
  }
  if (value.shape != want_value) {
    throw py::value_error("value_cache: expected shape " + shape_text(want_value) + " " +
                          cache_dims(kind, false) + " to match key_cache " + shape_text(key.shape) +
                          ", got " + shape_text(value.shape));
  }
  return shape;
}

}  // namespace

const char* cache_dims(ref::CacheKind kind, bool key) {
  switch (kind) {
    case ref::CacheKind::kXSplit:
      return key ? "[num_blocks, num_kv_heads, head_size / x, block_size, x]"
                 : "[num_blocks, num_kv_heads, head_size, block_size]";
    case ref::CacheKind::kNHD:
      return "[num_blocks, block_size, num_kv_heads, head_size]";
    case ref::CacheKind::kHND:
      return "[num_blocks, num_kv_heads, block_size, head_size]";
  }
  return "";
}

CacheTensors read_cache(const py::array& key_array, const py::array& value_array,
                        ref::CacheKind kind, DType kv_dtype, int64_t head_size) {
  const std::size_t key_ndim = kind == ref::CacheKind::kXSplit ? 5 : 4;
  for (bool packed : {false, true}) {
    StridedTensor key =
        read_tensor(key_array, "key_cache", key_ndim, cache_dims(kind, true), kv_dtype, packed);
    StridedTensor value =
        read_tensor(value_array, "value_cache", 4, cache_dims(kind, false), kv_dtype, packed);
    const ref::CacheShape shape = cache_shape(key, value, kind, kv_dtype, head_size);
    CacheTensors out;
    ref::PagedCacheLayout& c = out.layout;
    c = ref::make_cache_layout(kind, kv_dtype, shape);  // sizes, kind, dtype; strides below
    c.key = tensor_strides(kind, true, key, shape.head_size);
    c.value = tensor_strides(kind, false, value, shape.head_size);
    // An fp8 layout needs a scale kind to validate; the caller sets the real one.
    if (dtype_info(kv_dtype).fp8) c.scale_kind = ref::ScaleKind::kPerTensor;
    try {
      c.validate();
      c.scale_kind = ref::ScaleKind::kNone;
      out.key = std::move(key.bytes);
      out.value = std::move(value.bytes);
      return out;
    } catch (const std::invalid_argument& e) {
      if (packed) throw py::value_error(std::string("key_cache, value_cache: ") + e.what());
    }
  }
  throw std::logic_error("read_cache: unreachable");
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> cache_array(const ref::PagedCacheLayout& c,
                                                                  bool key) {
  const ref::CacheTensorStrides& s = key ? c.key : c.value;
  const int64_t nb = c.num_blocks, kv = c.num_kv_heads, hs = c.head_size, bs = c.block_size;
  switch (c.kind) {
    case ref::CacheKind::kXSplit:
      if (key)
        return {{nb, kv, hs / s.dim_split, bs, s.dim_split},
                {s.block, s.head, s.group, s.slot, s.dim}};
      return {{nb, kv, hs, bs}, {s.block, s.head, s.dim, s.slot}};
    case ref::CacheKind::kNHD:
      return {{nb, bs, kv, hs}, {s.block, s.slot, s.head, s.dim}};
    case ref::CacheKind::kHND:
      return {{nb, kv, bs, hs}, {s.block, s.head, s.slot, s.dim}};
  }
  return {};
}

}  // namespace pagecheck::python
