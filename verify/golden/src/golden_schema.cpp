/// The golden schema: shape attributes and the dataset list of each family.
#include "golden_schema.h"

#include <stdexcept>

#include "pagecheck/registry.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden {
namespace {

template <typename T>
const T& attr_as(const GoldenFile& file, const std::string& name, const std::string& path,
                 const char* type_name) {
  const auto it = file.attrs.find(name);
  if (it == file.attrs.end()) throw GoldenError(path, "attribute " + name, "missing");
  const T* value = std::get_if<T>(&it->second);
  if (value == nullptr) {
    throw GoldenError(path, "attribute " + name,
                      std::string("wrong type (expected ") + type_name + ")");
  }
  return *value;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  return attr_to_string(AttrValue(dims));
}

bool is_packed(const ref::TokenLayout& t) {
  return t.stride_head == t.head_size && t.stride_token == t.num_heads * t.head_size;
}

bool is_packed(const ref::PagedCacheLayout& c, DType dtype, bool key) {
  const auto p =
      ref::PagedCacheLayout::packed(dtype, c.num_blocks, c.num_kv_heads, c.head_size, c.block_size);
  if (key) {
    return c.key_stride_block == p.key_stride_block && c.key_stride_head == p.key_stride_head &&
           c.key_stride_group == p.key_stride_group && c.key_stride_slot == p.key_stride_slot;
  }
  return c.value_stride_block == p.value_stride_block &&
         c.value_stride_head == p.value_stride_head && c.value_stride_dim == p.value_stride_dim;
}

/// Strided tensor: the logical shape as dims when densely packed, else one flat dimension of
/// `span` elements.
DatasetSpec tensor(const std::string& path, DType dtype, std::vector<int64_t> shape,
                   std::vector<int64_t> strides, bool packed, int64_t span) {
  DatasetSpec spec{path, storage_type(dtype), packed ? shape : std::vector<int64_t>{span}, shape,
                   strides};
  return spec;
}

DatasetSpec token_tensor(const std::string& path, DType dtype, const ref::TokenLayout& t) {
  return tensor(path, dtype, {t.num_tokens, t.num_heads, t.head_size},
                {t.stride_token, t.stride_head, 1}, is_packed(t), t.span());
}

DatasetSpec cache_tensor(const std::string& path, DType dtype, const ref::PagedCacheLayout& c,
                         bool key) {
  if (key) {
    return tensor(path, dtype, {c.num_blocks, c.num_kv_heads, c.head_size / c.x, c.block_size, c.x},
                  {c.key_stride_block, c.key_stride_head, c.key_stride_group, c.key_stride_slot, 1},
                  is_packed(c, dtype, true), c.key_span());
  }
  return tensor(path, dtype, {c.num_blocks, c.num_kv_heads, c.head_size, c.block_size},
                {c.value_stride_block, c.value_stride_head, c.value_stride_dim, 1},
                is_packed(c, dtype, false), c.value_span());
}

DatasetSpec plain(const std::string& path, ElementType type, std::vector<int64_t> dims) {
  return DatasetSpec{path, type, std::move(dims), {}, {}};
}

}  // namespace

ElementType storage_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return ElementType::kFloat16;
    case DType::kBFloat16:
      return ElementType::kBFloat16;
    case DType::kFloat32:
      return ElementType::kFloat32;
  }
  throw std::invalid_argument("storage_type: unknown dtype");
}

int64_t attr_int(const GoldenFile& f, const std::string& name, const std::string& path) {
  return attr_as<int64_t>(f, name, path, "int64");
}
uint64_t attr_uint(const GoldenFile& f, const std::string& name, const std::string& path) {
  return attr_as<uint64_t>(f, name, path, "uint64");
}
float attr_float(const GoldenFile& f, const std::string& name, const std::string& path) {
  return attr_as<float>(f, name, path, "float32");
}
std::string attr_string(const GoldenFile& f, const std::string& name, const std::string& path) {
  return attr_as<std::string>(f, name, path, "string");
}

void put_shape_attrs(const CaseShape& s, std::map<std::string, AttrValue>* attrs) {
  auto& a = *attrs;
  a["family"] = std::string(family_name(s.family));
  a["dtype"] = std::string(dtype_name(s.dtype));
  a["cache_num_blocks"] = s.cache.num_blocks;
  a["cache_num_kv_heads"] = s.cache.num_kv_heads;
  a["cache_head_size"] = s.cache.head_size;
  a["cache_block_size"] = s.cache.block_size;
  a["cache_x"] = s.cache.x;
  a["cache_key_stride_block"] = s.cache.key_stride_block;
  a["cache_key_stride_head"] = s.cache.key_stride_head;
  a["cache_key_stride_group"] = s.cache.key_stride_group;
  a["cache_key_stride_slot"] = s.cache.key_stride_slot;
  a["cache_value_stride_block"] = s.cache.value_stride_block;
  a["cache_value_stride_head"] = s.cache.value_stride_head;
  a["cache_value_stride_dim"] = s.cache.value_stride_dim;
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    a["num_seqs"] = s.num_seqs;
    a["num_heads"] = s.num_heads;
    a["max_blocks_per_seq"] = s.max_blocks_per_seq;
    a["has_alibi"] = int64_t{s.alibi ? 1 : 0};
    a["query_stride_token"] = s.tokens.stride_token;
    a["query_stride_head"] = s.tokens.stride_head;
  } else {
    a["num_tokens"] = s.tokens.num_tokens;
    a["key_stride_token"] = s.tokens.stride_token;
    a["key_stride_head"] = s.tokens.stride_head;
    a["value_stride_token"] = s.values.stride_token;
    a["value_stride_head"] = s.values.stride_head;
  }
}

CaseShape parse_shape_attrs(const GoldenFile& f, const std::string& path) {
  CaseShape s;
  const auto get = [&](const char* name) { return attr_int(f, name, path); };
  try {
    s.family = parse_family(attr_string(f, "family", path));
  } catch (const GoldenError&) {
    throw;
  } catch (const std::exception& e) {
    throw GoldenError(path, "attribute family", e.what());
  }
  try {
    s.dtype = parse_dtype(attr_string(f, "dtype", path));
  } catch (const GoldenError&) {
    throw;
  } catch (const std::exception& e) {
    throw GoldenError(path, "attribute dtype", e.what());
  }
  ref::PagedCacheLayout& c = s.cache;
  c.num_blocks = get("cache_num_blocks");
  c.num_kv_heads = get("cache_num_kv_heads");
  c.head_size = get("cache_head_size");
  c.block_size = get("cache_block_size");
  c.x = get("cache_x");
  c.key_stride_block = get("cache_key_stride_block");
  c.key_stride_head = get("cache_key_stride_head");
  c.key_stride_group = get("cache_key_stride_group");
  c.key_stride_slot = get("cache_key_stride_slot");
  c.value_stride_block = get("cache_value_stride_block");
  c.value_stride_head = get("cache_value_stride_head");
  c.value_stride_dim = get("cache_value_stride_dim");
  try {
    c.validate(s.dtype);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(path, "attributes cache_*", e.what());
  }
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    s.num_seqs = get("num_seqs");
    s.num_heads = get("num_heads");
    s.max_blocks_per_seq = get("max_blocks_per_seq");
    s.alibi = get("has_alibi") != 0;
    s.tokens = {s.num_seqs, s.num_heads, c.head_size, get("query_stride_token"),
                get("query_stride_head")};
  } else {
    const int64_t n = get("num_tokens");
    s.tokens = {n, c.num_kv_heads, c.head_size, get("key_stride_token"), get("key_stride_head")};
    s.values = {n, c.num_kv_heads, c.head_size, get("value_stride_token"),
                get("value_stride_head")};
  }
  try {
    s.tokens.validate(s.family == PC_FAMILY_PAGED_ATTENTION ? "query" : "key");
    if (s.family != PC_FAMILY_PAGED_ATTENTION) s.values.validate("value");
  } catch (const std::invalid_argument& e) {
    throw GoldenError(path, "attributes *_stride_*", e.what());
  }
  return s;
}

std::vector<DatasetSpec> dataset_specs(const CaseShape& s) {
  const DType dt = s.dtype;
  std::vector<DatasetSpec> specs;
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    specs.push_back(token_tensor("inputs/query", dt, s.tokens));
    specs.push_back(cache_tensor("inputs/key_cache", dt, s.cache, true));
    specs.push_back(cache_tensor("inputs/value_cache", dt, s.cache, false));
    specs.push_back(
        plain("inputs/block_table", ElementType::kInt32, {s.num_seqs, s.max_blocks_per_seq}));
    specs.push_back(plain("inputs/context_lens", ElementType::kInt32, {s.num_seqs}));
    if (s.alibi)
      specs.push_back(plain("inputs/alibi_slopes", ElementType::kFloat32, {s.num_heads}));
    const auto packed = ref::TokenLayout::packed(s.num_seqs, s.num_heads, s.cache.head_size);
    specs.push_back(token_tensor("expected/out", dt, packed));
    specs.push_back(plain("expected/out_f64", ElementType::kFloat64,
                          {s.num_seqs, s.num_heads, s.cache.head_size}));
    specs.push_back(plain("expected/lse", ElementType::kFloat64, {s.num_seqs, s.num_heads}));
    return specs;
  }
  const int64_t n = s.tokens.num_tokens;
  const bool gather = s.family == PC_FAMILY_GATHER_CACHED_KV;
  specs.push_back(cache_tensor("inputs/key_cache", dt, s.cache, true));
  specs.push_back(cache_tensor("inputs/value_cache", dt, s.cache, false));
  specs.push_back(plain("inputs/slot_mapping", ElementType::kInt64, {n}));
  specs.push_back(token_tensor("inputs/key", dt, s.tokens));
  specs.push_back(token_tensor("inputs/value", dt, s.values));
  if (gather) {
    specs.push_back(token_tensor("expected/key", dt, s.tokens));
    specs.push_back(token_tensor("expected/value", dt, s.values));
  } else {
    specs.push_back(cache_tensor("expected/key_cache", dt, s.cache, true));
    specs.push_back(cache_tensor("expected/value_cache", dt, s.cache, false));
  }
  return specs;
}

GoldenDataset make_dataset(const DatasetSpec& spec, std::vector<std::byte> bytes) {
  GoldenDataset d;
  d.path = spec.path;
  d.type = spec.type;
  d.dims = spec.dims;
  d.bytes = std::move(bytes);
  d.attrs["dtype"] = std::string(element_type_name(spec.type));
  d.attrs["sha256"] = sha256_hex(d.bytes.data(), d.bytes.size());
  if (!spec.logical_shape.empty()) {
    d.attrs["logical_shape"] = spec.logical_shape;
    d.attrs["strides"] = spec.strides;
  }
  return d;
}

void check_dataset(const DatasetSpec& spec, const GoldenDataset* d, const std::string& path) {
  if (d == nullptr) throw GoldenError(path, spec.path, "missing dataset");
  if (d->type != spec.type) {
    throw GoldenError(path, spec.path,
                      std::string("wrong dtype: ") + element_type_name(d->type) +
                          " (the schema needs " + element_type_name(spec.type) + ")");
  }
  if (d->dims != spec.dims) {
    throw GoldenError(
        path, spec.path,
        "wrong shape " + dims_text(d->dims) + " (the schema needs " + dims_text(spec.dims) + ")");
  }
  const auto attr = [&](const char* name) -> const AttrValue* {
    const auto it = d->attrs.find(name);
    return it == d->attrs.end() ? nullptr : &it->second;
  };
  const AttrValue* dtype = attr("dtype");
  if (dtype == nullptr || attr_to_string(*dtype) != element_type_name(spec.type)) {
    throw GoldenError(
        path, spec.path,
        std::string("dtype attribute must be \"") + element_type_name(spec.type) + "\"");
  }
  if (!spec.logical_shape.empty()) {
    const AttrValue* shape = attr("logical_shape");
    const AttrValue* strides = attr("strides");
    if (shape == nullptr || strides == nullptr || *shape != AttrValue(spec.logical_shape) ||
        *strides != AttrValue(spec.strides)) {
      throw GoldenError(path, spec.path,
                        "logical_shape/strides attributes disagree with the root layout "
                        "attributes (expected " +
                            dims_text(spec.logical_shape) + " / " + dims_text(spec.strides) + ")");
    }
  }
  const AttrValue* sha = attr("sha256");
  if (sha == nullptr || !std::holds_alternative<std::string>(*sha)) {
    throw GoldenError(path, spec.path, "missing sha256 attribute");
  }
  const std::string actual = sha256_hex(d->bytes.data(), d->bytes.size());
  if (actual != std::get<std::string>(*sha)) {
    throw GoldenError(path, spec.path,
                      "SHA-256 mismatch: attribute says " + std::get<std::string>(*sha) +
                          ", data hashes to " + actual + " (corrupt or edited data)");
  }
}

}  // namespace pagecheck::verify::golden
