/// Problem descriptions from Python arguments (problem_args.h).
#include "problem_args.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "array_args.h"

namespace pagecheck::python {
namespace {

constexpr const char* kTokenDims = "[num_tokens, num_kv_heads, head_size]";
constexpr const char* kKeyCacheDims = "[num_blocks, num_kv_heads, head_size / x, block_size, x]";
constexpr const char* kValueCacheDims = "[num_blocks, num_kv_heads, head_size, block_size]";

/// Runs the problem's own validation, turning its errors (which name the argument) into
/// ValueError.
template <typename Problem>
void validate(const Problem& problem) {
  try {
    problem.validate();
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace

ref::PagedAttentionProblem attention_problem(
    const py::handle& query, const py::handle& key_cache, const py::handle& value_cache,
    const py::handle& block_table, const py::handle& context_lens, const py::handle& scale,
    const py::handle& alibi_slopes, const py::handle& dtype) {
  const std::optional<DType> requested = requested_dtype(dtype);
  const py::array q = to_numpy(query, "query");
  const py::array k = to_numpy(key_cache, "key_cache");
  const py::array v = to_numpy(value_cache, "value_cache");
  ref::PagedAttentionProblem p;
  p.dtype = tensor_dtype(q, "query", requested, std::nullopt, "");
  tensor_dtype(k, "key_cache", requested, p.dtype, "query");
  tensor_dtype(v, "value_cache", requested, p.dtype, "query");

  StridedTensor qt = read_tensor(q, "query", 3, "[num_seqs, num_heads, head_size]", p.dtype);
  StridedTensor kt = read_tensor(k, "key_cache", 5, kKeyCacheDims, p.dtype);
  StridedTensor vt = read_tensor(v, "value_cache", 4, kValueCacheDims, p.dtype);
  p.num_seqs = qt.shape[0];
  p.num_heads = qt.shape[1];
  p.query_layout = token_layout(qt);
  p.cache = cache_layout(kt, vt, p.dtype, qt.shape[2]);
  p.query = std::move(qt.bytes);
  p.key_cache = std::move(kt.bytes);
  p.value_cache = std::move(vt.bytes);

  const py::array table = to_numpy(block_table, "block_table");
  if (table.ndim() != 2) {
    throw py::value_error(
        "block_table: expected 2 dimensions [num_seqs, max_blocks_per_seq], got " +
        std::to_string(table.ndim()));
  }
  p.max_blocks_per_seq = table.shape(1);
  p.block_table = read_int32(table, "block_table", {p.num_seqs, p.max_blocks_per_seq},
                             "[num_seqs, max_blocks_per_seq]");
  p.context_lens = read_int32(context_lens, "context_lens", {p.num_seqs}, "[num_seqs]");
  if (scale.is_none()) {
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.cache.head_size)));
  } else {
    try {
      p.scale = scale.cast<float>();
    } catch (const py::cast_error&) {
      throw py::type_error("scale: expected a real number or None, got " +
                           py::repr(scale).cast<std::string>());
    }
  }
  if (!alibi_slopes.is_none()) {
    p.alibi_slopes = read_float32(alibi_slopes, "alibi_slopes", {p.num_heads}, "[num_heads]");
  }
  validate(p);
  return p;
}

ref::CacheCopyProblem copy_problem(const py::handle& key, const py::handle& value,
                                   const py::handle& key_cache, const py::handle& value_cache,
                                   const py::handle& slot_mapping, const py::handle& dtype) {
  const std::optional<DType> requested = requested_dtype(dtype);
  const py::array k = to_numpy(key, "key");
  const py::array v = to_numpy(value, "value");
  const py::array kc = to_numpy(key_cache, "key_cache");
  const py::array vc = to_numpy(value_cache, "value_cache");
  ref::CacheCopyProblem p;
  p.dtype = tensor_dtype(k, "key", requested, std::nullopt, "");
  tensor_dtype(v, "value", requested, p.dtype, "key");
  tensor_dtype(kc, "key_cache", requested, p.dtype, "key");
  tensor_dtype(vc, "value_cache", requested, p.dtype, "key");

  StridedTensor kt = read_tensor(k, "key", 3, kTokenDims, p.dtype);
  StridedTensor vt = read_tensor(v, "value", 3, kTokenDims, p.dtype);
  StridedTensor kct = read_tensor(kc, "key_cache", 5, kKeyCacheDims, p.dtype);
  StridedTensor vct = read_tensor(vc, "value_cache", 4, kValueCacheDims, p.dtype);
  if (vt.shape != kt.shape) {
    throw py::value_error("value: expected the shape of key " + shape_text(kt.shape) + ", got " +
                          shape_text(vt.shape));
  }
  p.cache = cache_layout(kct, vct, p.dtype, kt.shape[2]);
  if (kt.shape[1] != p.cache.num_kv_heads) {
    throw py::value_error(
        "key: " + std::to_string(kt.shape[1]) +
        " heads, but the caches have num_kv_heads = " + std::to_string(p.cache.num_kv_heads));
  }
  p.key_layout = token_layout(kt);
  p.value_layout = token_layout(vt);
  p.key = std::move(kt.bytes);
  p.value = std::move(vt.bytes);
  p.key_cache = std::move(kct.bytes);
  p.value_cache = std::move(vct.bytes);
  p.slot_mapping =
      read_integers(slot_mapping, "slot_mapping", {p.key_layout.num_tokens}, "[num_tokens]");
  validate(p);
  return p;
}

}  // namespace pagecheck::python
