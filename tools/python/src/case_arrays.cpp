/// Materialized cases as numpy keyword arguments and kernel outputs back (case_arrays.h).
#include "case_arrays.h"

#include <cstring>
#include <utility>

#include "array_args.h"
#include "array_out.h"
#include "cache_args.h"

namespace pagecheck::python {
namespace {

/// A view of `base` (a flat array owning a raw buffer) starting `offset` elements in.
py::array view(const py::array& base, const std::vector<int64_t>& shape,
               const std::vector<int64_t>& strides, int64_t offset = 0) {
  const auto item = base.itemsize();
  std::vector<py::ssize_t> byte_strides, dims(shape.begin(), shape.end());
  for (int64_t s : strides) byte_strides.push_back(s * item);
  auto* data = static_cast<std::byte*>(const_cast<void*>(base.data())) + offset * item;
  return py::array(base.dtype(), dims, byte_strides, data, base);
}

/// A flat array of numpy dtype `dt` owning `bytes`.
py::array flat(std::vector<std::byte> bytes, const py::dtype& dt) {
  const auto n = static_cast<int64_t>(bytes.size()) / dt.itemsize();
  return bytes_array(std::move(bytes), dt, {n}, {1});
}

/// The key and value arrays of a cache over flat arrays owning its raw buffers (one for a
/// combined cache: the value tensor starts value_base elements in).
struct CacheViews {
  py::array key_base, value_base;  ///< flat owners (the same array when combined)
  py::array key, value;            ///< the tensors in their kind's shape (cache_dims)
};

CacheViews cache_views(const ref::PagedCacheLayout& c, std::vector<std::byte> key,
                       std::vector<std::byte> value) {
  const py::dtype dt = storage_numpy_dtype(c.dtype);
  const auto [key_shape, key_strides] = cache_array(c, true);
  const auto [value_shape, value_strides] = cache_array(c, false);
  CacheViews v;
  v.key_base = flat(std::move(key), dt);
  v.value_base = c.combined ? v.key_base : flat(std::move(value), dt);
  v.key = view(v.key_base, key_shape, key_strides);
  v.value = view(v.value_base, value_shape, value_strides, c.combined ? c.value_base : 0);
  return v;
}

/// A token tensor of layout `l` over a flat array owning raw storage.
py::array token_view(const py::array& base, const ref::TokenLayout& l) {
  return view(base, {l.num_tokens, l.num_heads, l.head_size}, {l.stride_token, l.stride_head, 1});
}

py::array token_array(std::vector<std::byte> bytes, DType dtype, const ref::TokenLayout& l) {
  return token_view(flat(std::move(bytes), storage_numpy_dtype(dtype)), l);
}

py::object floats_or_none(const std::vector<float>& values) {
  if (values.empty()) return py::none();
  return py::array_t<float>(static_cast<py::ssize_t>(values.size()), values.data());
}

/// The cache keywords shared by every family.
void add_cache_keywords(py::dict& d, const ref::PagedCacheLayout& c, DType dtype,
                        const std::vector<float>& k_scale, const std::vector<float>& v_scale) {
  d["dtype"] = dtype_name(dtype);
  d["kind"] = ref::cache_kind_name(c.kind);
  d["kv_dtype"] = dtype_name(c.dtype);
  d["k_scale"] = floats_or_none(k_scale);
  d["v_scale"] = floats_or_none(v_scale);
}

/// Raw bytes of a flat owning array.
std::vector<std::byte> bytes_of(const py::array& base) {
  std::vector<std::byte> out(static_cast<std::size_t>(base.nbytes()));
  std::memcpy(out.data(), base.data(), out.size());
  return out;
}

/// Writes kernel output `given` (logical shape of `target`) into `target`, a view of a raw
/// buffer. Throws TypeError / ValueError naming `name`.
void write_into(const py::array& target, const py::handle& given, const std::string& name,
                DType dtype) {
  const py::array a = to_numpy(given, name);
  tensor_dtype(a, name, dtype, dtype, "the case");
  const std::vector<int64_t> want(target.shape(), target.shape() + target.ndim());
  const std::vector<int64_t> got(a.shape(), a.shape() + a.ndim());
  if (want != got) {
    throw py::value_error(name + ": expected shape " + shape_text(want) + ", got " +
                          shape_text(got));
  }
  py::module_::import("numpy").attr("copyto")(target, a, py::arg("casting") = "no");
}

}  // namespace

py::dict attention_arrays(const ref::PagedAttentionProblem& p, const ref::TokenLayout& out_layout) {
  py::dict d;
  d["query"] = token_array(p.query, p.dtype, p.query_layout);
  const CacheViews cache = cache_views(p.cache, p.key_cache, p.value_cache);
  d["key_cache"] = cache.key;
  d["value_cache"] = cache.value;
  const ref::RaggedBatch& b = p.batch;
  const std::vector<int32_t> table = b.strided_block_table();
  std::vector<std::byte> table_bytes(table.size() * sizeof(int32_t));
  std::memcpy(table_bytes.data(), table.data(), table_bytes.size());
  d["block_table"] = view(flat(std::move(table_bytes), py::dtype("<i4")),
                          {b.num_seqs, b.max_blocks_per_seq}, {b.table_stride(), 1});
  d["context_lens"] =
      py::array_t<int32_t>(static_cast<py::ssize_t>(b.context_lens.size()), b.context_lens.data());
  d["query_start"] = b.query_start.empty()
                         ? py::object(py::none())
                         : py::array_t<int32_t>(static_cast<py::ssize_t>(b.query_start.size()),
                                                b.query_start.data());
  d["max_context_len"] = b.host_max_context_len();
  d["scale"] = p.scale;
  const ref::AttentionFeatures& f = p.features;
  d["alibi_slopes"] = floats_or_none(f.alibi_slopes);
  d["sinks"] = floats_or_none(f.sinks);
  d["window"] = f.window;
  d["soft_cap"] = f.soft_cap;
  d["causal"] = f.causal;
  add_cache_keywords(d, p.cache, p.dtype, p.k_scale, p.v_scale);
  const std::size_t item = dtype_size(p.dtype);
  const uint32_t poison = dtype_info(p.dtype).output_poison_bits;
  std::vector<std::byte> out(static_cast<std::size_t>(out_layout.span()) * item);
  for (std::size_t i = 0; i < out.size(); i += item) std::memcpy(&out[i], &poison, item);
  d["out"] = token_array(std::move(out), p.dtype, out_layout);
  return d;
}

py::dict copy_arrays(const ref::CacheCopyProblem& p, bool gather) {
  py::dict d;
  d["key"] = token_array(p.key, p.dtype, p.key_layout);
  d["value"] = token_array(p.value, p.dtype, p.value_layout);
  const CacheViews cache = cache_views(p.cache, p.key_cache, p.value_cache);
  d["key_cache"] = cache.key;
  d["value_cache"] = cache.value;
  d["slot_mapping"] =
      py::array_t<int64_t>(static_cast<py::ssize_t>(p.slot_mapping.size()), p.slot_mapping.data());
  add_cache_keywords(d, p.cache, p.dtype, p.k_scale, p.v_scale);
  if (gather) d["dequantize"] = p.dequantize;
  return d;
}

std::vector<std::byte> attention_output(const py::handle& out, const ref::PagedAttentionProblem& p,
                                        const std::string& name, std::optional<DType> requested) {
  const py::array given = to_numpy(out, name);
  tensor_dtype(given, name, requested, p.dtype, "query");
  return packed_bytes(given, name, {p.query_layout.num_tokens, p.num_heads, p.head_size()},
                      "[num_query_tokens, num_heads, head_size] like query");
}

void copy_outputs(const py::handle& first, const py::handle& second, const ref::CacheCopyProblem& p,
                  bool gather, std::vector<std::byte>* first_out,
                  std::vector<std::byte>* second_out) {
  if (gather) {
    const py::dtype dt = storage_numpy_dtype(p.dtype);
    const py::array key = flat(p.key, dt), value = flat(p.value, dt);
    write_into(token_view(key, p.key_layout), first, "key", p.dtype);
    write_into(token_view(value, p.value_layout), second, "value", p.dtype);
    *first_out = bytes_of(key);
    *second_out = bytes_of(value);
    return;
  }
  const CacheViews cache = cache_views(p.cache, p.key_cache, p.value_cache);
  write_into(cache.key, first, "key_cache", p.cache.dtype);
  write_into(cache.value, second, "value_cache", p.cache.dtype);
  *first_out = bytes_of(cache.key_base);
  second_out->clear();
  if (!p.cache.combined) *second_out = bytes_of(cache.value_base);
}

}  // namespace pagecheck::python
