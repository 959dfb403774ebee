/// HDF5 form of the cache descriptor: the cache_* root attributes, the fp8 scale datasets and
/// the specs of the cache tensors.
#include <stdexcept>
#include <string>

#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

/// The per-tensor stride fields, in the order they are written.
constexpr const char* kStrideFields[] = {"block", "head", "slot", "group", "dim", "dim_split"};

void write_strides(const std::string& prefix, const ref::CacheTensorStrides& s, AttrMap& a) {
  const int64_t values[] = {s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
  for (std::size_t k = 0; k < 6; ++k) a[prefix + kStrideFields[k]] = values[k];
}

ref::CacheTensorStrides read_strides(const std::string& prefix, const GoldenReader& r) {
  ref::CacheTensorStrides s;
  int64_t* fields[] = {&s.block, &s.head, &s.slot, &s.group, &s.dim, &s.dim_split};
  for (std::size_t k = 0; k < 6; ++k) *fields[k] = r.integer(prefix + kStrideFields[k]);
  return s;
}

DatasetSpec scale_spec(const char* name, const ref::PagedCacheLayout& c) {
  return array_spec(std::string("inputs/") + name, ElementType::kFloat32, {c.scale_count()});
}

/// Logical shape, strides and axis names of one cache tensor in the engine shape of its kind
/// (the shape pagecheck.reference takes): x-split keys [block, head, group, slot, dim], x-split
/// values [block, head, dim, slot], NHD [block, slot, head, dim], HND [block, head, slot, dim].
/// The strides are the descriptor's, so padded and custom layouts read right in any order.
void tensor_view(const ref::PagedCacheLayout& c, const ref::CacheTensorStrides& s,
                 std::vector<int64_t>* shape, std::vector<int64_t>* strides, std::string* axes) {
  if (s.dim_split > 0 && s.dim_split < c.head_size) {
    *shape = {c.num_blocks, c.num_kv_heads, c.head_size / s.dim_split, c.block_size, s.dim_split};
    *strides = {s.block, s.head, s.group, s.slot, s.dim};
    *axes = "block,head,group,slot,dim";
  } else if (c.kind == ref::CacheKind::kXSplit) {
    *shape = {c.num_blocks, c.num_kv_heads, c.head_size, c.block_size};
    *strides = {s.block, s.head, s.dim, s.slot};
    *axes = "block,head,dim,slot";
  } else if (c.kind == ref::CacheKind::kNHD) {
    *shape = {c.num_blocks, c.block_size, c.num_kv_heads, c.head_size};
    *strides = {s.block, s.slot, s.head, s.dim};
    *axes = "block,slot,head,dim";
  } else {
    *shape = {c.num_blocks, c.num_kv_heads, c.block_size, c.head_size};
    *strides = {s.block, s.head, s.slot, s.dim};
    *axes = "block,head,slot,dim";
  }
}

}  // namespace

void write_cache(const CacheForm& cache, GoldenFile& file) {
  const ref::PagedCacheLayout& c = cache.layout;
  AttrMap& a = file.attrs;
  a["cache_kind"] = std::string(ref::cache_kind_name(c.kind));
  a["cache_dtype"] = std::string(dtype_name(c.dtype));
  a["cache_scale_kind"] = std::string(ref::scale_kind_name(c.scale_kind));
  a["cache_num_blocks"] = c.num_blocks;
  a["cache_num_kv_heads"] = c.num_kv_heads;
  a["cache_head_size"] = c.head_size;
  a["cache_block_size"] = c.block_size;
  write_strides("cache_key_stride_", c.key, a);
  write_strides("cache_value_stride_", c.value, a);
  a["cache_combined"] = int64_t{c.combined ? 1 : 0};
  a["cache_value_base"] = c.value_base;
  if (c.scale_kind != ref::ScaleKind::kNone) {
    add_dataset(file, scale_spec("k_scale", c), as_bytes(cache.k_scale));
    add_dataset(file, scale_spec("v_scale", c), as_bytes(cache.v_scale));
  }
}

CacheForm read_cache(GoldenReader& r) {
  CacheForm cache;
  ref::PagedCacheLayout& c = cache.layout;
  c.kind =
      r.parsed("cache_kind", [](const std::string& t) { return ref::parse_cache_kind(t.c_str()); });
  c.dtype = r.parsed("cache_dtype", [](const std::string& t) { return parse_dtype(t); });
  c.scale_kind = r.parsed("cache_scale_kind",
                          [](const std::string& t) { return ref::parse_scale_kind(t.c_str()); });
  c.num_blocks = r.integer("cache_num_blocks");
  c.num_kv_heads = r.integer("cache_num_kv_heads");
  c.head_size = r.integer("cache_head_size");
  c.block_size = r.integer("cache_block_size");
  c.key = read_strides("cache_key_stride_", r);
  c.value = read_strides("cache_value_stride_", r);
  c.combined = r.flag("cache_combined");
  c.value_base = r.integer("cache_value_base");
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw GoldenError(r.path(), "attributes cache_*", e.what());
  }
  if (c.scale_kind != ref::ScaleKind::kNone) {
    cache.k_scale = r.values<float>(scale_spec("k_scale", c));
    cache.v_scale = r.values<float>(scale_spec("v_scale", c));
  }
  return cache;
}

std::vector<DatasetSpec> cache_tensor_specs(const std::string& group,
                                            const ref::PagedCacheLayout& c) {
  std::vector<int64_t> shape, strides;
  std::string axes;
  tensor_view(c, c.key, &shape, &strides, &axes);
  DatasetSpec key = tensor_spec(group + "/key_cache", c.dtype, shape, strides);
  key.extra_attrs["axes"] = axes;
  tensor_view(c, c.value, &shape, &strides, &axes);
  if (!c.combined) {
    DatasetSpec value = tensor_spec(group + "/value_cache", c.dtype, shape, strides);
    value.extra_attrs["axes"] = axes;
    return {key, value};
  }
  key.dims = {c.key_span()};  // the whole allocation: both tensors
  key.extra_attrs["value_logical_shape"] = shape;
  key.extra_attrs["value_strides"] = strides;
  key.extra_attrs["value_axes"] = axes;
  key.extra_attrs["value_offset"] = c.value_base;
  return {key};
}

}  // namespace pagecheck::verify::golden
