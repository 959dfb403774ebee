/// pagecheck.reference: the CPU reference on numpy arrays (docs/python.md).
#include <cstring>
#include <utility>

#include <pybind11/stl.h>

#include "array_args.h"
#include "array_out.h"
#include "bindings.h"
#include "cache_args.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "problem_args.h"

namespace pagecheck::python {
namespace {

/// Element strides of a token tensor of `layout`.
std::vector<int64_t> token_strides(const ref::TokenLayout& layout) {
  return {layout.stride_token, layout.stride_head, 1};
}

/// Keyword num_threads (None or absent: 0, all cores).
int num_threads(const py::kwargs& kw) {
  const py::object n = keyword(kw, "num_threads");
  return n.is_none() ? 0 : n.cast<int>();
}

py::tuple paged_attention(const py::handle& query, const py::handle& key_cache,
                          const py::handle& value_cache, const py::handle& block_table,
                          const py::handle& context_lens, const py::kwargs& kw) {
  const ref::PagedAttentionProblem p =
      attention_problem(query, key_cache, value_cache, block_table, context_lens, kw);
  const ref::ReferenceOptions options{num_threads(kw)};
  ref::PagedAttentionResult r;
  {
    py::gil_scoped_release released;
    r = ref::paged_attention(p, options);
  }
  py::array out = float64_array(std::move(r.out), {r.num_rows, r.num_heads, r.head_size});
  py::array lse = float64_array(std::move(r.lse), {r.num_rows, r.num_heads});
  return py::make_tuple(out, lse);
}

/// The copy problem of the arguments after `op` (ref::gather_cached_kv or
/// ref::reshape_and_cache) ran on it.
ref::CacheCopyProblem copied(const py::handle& key, const py::handle& value,
                             const py::handle& key_cache, const py::handle& value_cache,
                             const py::handle& slot_mapping, const py::kwargs& kw,
                             void (*op)(ref::CacheCopyProblem&)) {
  ref::CacheCopyProblem p = copy_problem(key, value, key_cache, value_cache, slot_mapping, kw);
  py::gil_scoped_release released;
  op(p);
  return p;
}

py::tuple gather_cached_kv(const py::handle& key, const py::handle& value,
                           const py::handle& key_cache, const py::handle& value_cache,
                           const py::handle& slot_mapping, const py::kwargs& kw) {
  ref::CacheCopyProblem p =
      copied(key, value, key_cache, value_cache, slot_mapping, kw, &ref::gather_cached_kv);
  const std::vector<int64_t> shape{p.key_layout.num_tokens, p.cache.num_kv_heads,
                                   p.cache.head_size};
  return py::make_tuple(
      storage_array(std::move(p.key), p.dtype, shape, token_strides(p.key_layout)),
      storage_array(std::move(p.value), p.dtype, shape, token_strides(p.value_layout)));
}

py::tuple reshape_and_cache(const py::handle& key, const py::handle& value,
                            const py::handle& key_cache, const py::handle& value_cache,
                            const py::handle& slot_mapping, const py::kwargs& kw) {
  ref::CacheCopyProblem p =
      copied(key, value, key_cache, value_cache, slot_mapping, kw, &ref::reshape_and_cache);
  const ref::PagedCacheLayout& c = p.cache;
  auto [key_shape, key_strides] = cache_array(c, true);
  auto [value_shape, value_strides] = cache_array(c, false);
  return py::make_tuple(
      storage_array(std::move(p.key_cache), c.dtype, key_shape, key_strides),
      storage_array(std::move(p.value_cache), c.dtype, value_shape, value_strides));
}

/// Shape of an array as int64.
std::vector<int64_t> shape_of(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

py::array to_storage(const py::handle& values, const py::handle& dtype) {
  const std::optional<DType> requested = requested_dtype(dtype);
  if (!requested) throw py::type_error("dtype: to_storage needs a storage dtype name");
  const py::array given = to_numpy(values, "values");
  const std::vector<int64_t> shape = shape_of(given);
  std::vector<double> v = read_float64(given, "values", shape, "");
  std::vector<std::byte> bytes(v.size() * dtype_size(*requested));
  for (std::size_t i = 0; i < v.size(); ++i) {
    store_element(*requested, bytes.data(), static_cast<int64_t>(i), v[i]);
  }
  return storage_array(std::move(bytes), *requested, shape, packed_strides(shape));
}

py::array to_float64(const py::handle& array, const py::handle& dtype) {
  const py::array given = to_numpy(array, "array");
  const DType d = tensor_dtype(given, "array", requested_dtype(dtype), std::nullopt, "");
  const auto packed = py::module_::import("numpy").attr("ascontiguousarray")(given);
  const py::array a = py::reinterpret_borrow<py::array>(packed);
  std::vector<double> v(static_cast<std::size_t>(a.size()));
  const auto* base = static_cast<const std::byte*>(a.data());
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = load_element(d, base, static_cast<int64_t>(i));
  }
  return float64_array(std::move(v), shape_of(a));
}

}  // namespace

void bind_reference(py::module_& m) {
  using namespace pybind11::literals;
  m.doc() = "The CPU reference (float64 accumulation) on numpy arrays; see docs/python.md.";
  // The keywords (scale, dtype, kind, ...) are documented and defaulted by the Python
  // wrappers in pagecheck/reference.py; problem_args.h reads them.
  m.def("paged_attention", &paged_attention, "query"_a, "key_cache"_a, "value_cache"_a,
        "block_table"_a, "context_lens"_a,
        "(out, lse): float64 [num_query_tokens, num_heads, head_size] and [num_query_tokens, "
        "num_heads].");
  m.def("gather_cached_kv", &gather_cached_kv, "key"_a, "value"_a, "key_cache"_a, "value_cache"_a,
        "slot_mapping"_a,
        "(key, value) after copying cache slot slot_mapping[t] into row t; new arrays.");
  m.def("reshape_and_cache", &reshape_and_cache, "key"_a, "value"_a, "key_cache"_a, "value_cache"_a,
        "slot_mapping"_a,
        "(key_cache, value_cache) after writing row t into slot slot_mapping[t]; new arrays.");
  m.def("to_storage", &to_storage, "values"_a, "dtype"_a,
        "values rounded to nearest even in a storage dtype (bfloat16: uint16 bits; fp8: uint8 "
        "codes, saturating).");
  m.def("to_float64", &to_float64, "array"_a, "dtype"_a = py::none(),
        "A storage-dtype array (bfloat16: uint16/int16 bits with dtype='bfloat16'; fp8: uint8 "
        "codes with dtype='fp8_e4m3' / 'fp8_e5m2') as float64.");
}

}  // namespace pagecheck::python
