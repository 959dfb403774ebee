/// Problem descriptions from Python arguments (problem_args.h).
#include "problem_args.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "array_args.h"
#include "cache_args.h"

namespace pagecheck::python {
namespace {

constexpr const char* kTokenDims = "[num_tokens, num_kv_heads, head_size]";

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

/// Scales argument `name`: None (empty), a number (one scale) or a 1-D array of one or
/// `num_kv_heads` entries.
std::vector<float> read_scales(const py::handle& obj, const std::string& name,
                               int64_t num_kv_heads) {
  if (obj.is_none()) return {};
  if (py::isinstance<py::float_>(obj) || py::isinstance<py::int_>(obj)) {
    return {obj.cast<float>()};
  }
  const py::array a = to_numpy(obj, name);
  const int64_t n = a.ndim() == 1 ? a.shape(0) : -1;
  return read_float32(a, name, {n == 1 ? 1 : num_kv_heads}, "[1] or [num_kv_heads]");
}

/// The cache of a problem: its arrays in the requested kind and dtype (default: the tokens'),
/// with fp8 scales (per tensor 1.0 when none are given).
struct Cache {
  ref::PagedCacheLayout layout;
  std::vector<std::byte> key, value;
  std::vector<float> k_scale, v_scale;
};

Cache read_cache_args(const py::handle& key_cache, const py::handle& value_cache,
                      const py::kwargs& kw, DType token_dtype, const std::string& token_name,
                      const std::optional<DType>& requested, int64_t head_size) {
  const std::optional<DType> kv_requested = requested_kv_dtype(keyword(kw, "kv_dtype"));
  const ref::CacheKind kind = requested_kind(keyword(kw, "kind"));
  const py::array k = to_numpy(key_cache, "key_cache");
  const py::array v = to_numpy(value_cache, "value_cache");
  const std::optional<DType> kv_want = kv_requested ? kv_requested : requested;
  const std::optional<DType> kv_expect =
      kv_requested ? kv_requested : std::optional<DType>(token_dtype);
  const std::string expect_from = kv_requested ? "kv_dtype" : token_name;
  const DType kv = tensor_dtype(k, "key_cache", kv_want, kv_expect, expect_from);
  tensor_dtype(v, "value_cache", kv_want, kv, expect_from);
  CacheTensors t = read_cache(k, v, kind, kv, head_size);
  Cache c{std::move(t.layout), std::move(t.key), std::move(t.value), {}, {}};
  const int64_t heads = c.layout.num_kv_heads;
  c.k_scale = read_scales(keyword(kw, "k_scale"), "k_scale", heads);
  c.v_scale = read_scales(keyword(kw, "v_scale"), "v_scale", heads);
  if (!dtype_info(kv).fp8) {
    if (!c.k_scale.empty() || !c.v_scale.empty()) {
      throw py::value_error(std::string("k_scale, v_scale: scales need an fp8 kv_dtype, not ") +
                            dtype_name(kv));
    }
    return c;
  }
  if (c.k_scale.empty()) c.k_scale = {1.0f};
  if (c.v_scale.empty()) c.v_scale = {1.0f};
  // One scale kind for both: a single scale next to per-head ones is repeated per head.
  if (c.k_scale.size() == 1 && c.v_scale.size() > 1)
    c.k_scale.assign(c.v_scale.size(), c.k_scale[0]);
  if (c.v_scale.size() == 1 && c.k_scale.size() > 1)
    c.v_scale.assign(c.k_scale.size(), c.v_scale[0]);
  c.layout.scale_kind =
      c.k_scale.size() == 1 ? ref::ScaleKind::kPerTensor : ref::ScaleKind::kPerKvHead;
  return c;
}

/// Moves a cache's layout, buffers and scales into a problem.
template <typename Problem>
void take_cache(Problem& p, Cache&& c) {
  p.cache = c.layout;
  p.key_cache = std::move(c.key);
  p.value_cache = std::move(c.value);
  p.k_scale = std::move(c.k_scale);
  p.v_scale = std::move(c.v_scale);
}

}  // namespace

py::object keyword(const py::kwargs& kw, const char* name) {
  return kw.contains(name) ? py::reinterpret_borrow<py::object>(kw[name]) : py::object(py::none());
}

ref::PagedAttentionProblem attention_problem(const py::handle& query, const py::handle& key_cache,
                                             const py::handle& value_cache,
                                             const py::handle& block_table,
                                             const py::handle& context_lens, const py::kwargs& kw) {
  const std::optional<DType> requested = requested_dtype(keyword(kw, "dtype"));
  const py::array q = to_numpy(query, "query");
  ref::PagedAttentionProblem p;
  p.dtype = tensor_dtype(q, "query", requested, std::nullopt, "");
  TokenTensor qt = read_tokens(q, "query", "[num_seqs, num_heads, head_size]", p.dtype);
  take_cache(p, read_cache_args(key_cache, value_cache, kw, p.dtype, "query", requested,
                                qt.layout.head_size));
  p.num_heads = qt.layout.num_heads;
  p.query_layout = qt.layout;
  p.query = std::move(qt.bytes);
  const py::object query_start = keyword(kw, "query_start"), scale = keyword(kw, "scale");
  const py::object alibi_slopes = keyword(kw, "alibi_slopes"), sinks = keyword(kw, "sinks");
  const py::object window = keyword(kw, "window"), soft_cap = keyword(kw, "soft_cap");
  const py::object causal = keyword(kw, "causal");

  ref::RaggedBatch& b = p.batch;
  b.num_seqs = p.query_layout.num_tokens;
  if (!query_start.is_none()) {
    const py::array starts = to_numpy(query_start, "query_start");
    if (starts.ndim() != 1 || starts.shape(0) < 2) {
      throw py::value_error("query_start: expected 1 dimension [num_seqs + 1] of at least 2");
    }
    b.num_seqs = starts.shape(0) - 1;
    b.query_start = read_int32(starts, "query_start", {b.num_seqs + 1}, "[num_seqs + 1]");
  }
  const py::array table = to_numpy(block_table, "block_table");
  if (table.ndim() != 2) {
    throw py::value_error(
        "block_table: expected 2 dimensions [num_seqs, max_blocks_per_seq], got " +
        std::to_string(table.ndim()));
  }
  b.max_blocks_per_seq = table.shape(1);
  b.block_table = read_int32(table, "block_table", {b.num_seqs, b.max_blocks_per_seq},
                             "[num_seqs, max_blocks_per_seq]");
  b.context_lens = read_int32(context_lens, "context_lens", {b.num_seqs}, "[num_seqs]");
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
  ref::AttentionFeatures& f = p.features;
  if (!alibi_slopes.is_none()) {
    f.alibi_slopes = read_float32(alibi_slopes, "alibi_slopes", {p.num_heads}, "[num_heads]");
  }
  if (!sinks.is_none()) {
    f.sinks = read_float32(sinks, "sinks", {p.num_heads}, "[num_heads]");
  }
  try {
    if (!window.is_none()) f.window = window.cast<int64_t>();
    if (!soft_cap.is_none()) f.soft_cap = soft_cap.cast<float>();
    if (!causal.is_none()) f.causal = causal.cast<bool>();
  } catch (const py::cast_error&) {
    throw py::type_error("window, soft_cap, causal: expected an int, a real number and a bool");
  }
  validate(p);
  return p;
}

ref::CacheCopyProblem copy_problem(const py::handle& key, const py::handle& value,
                                   const py::handle& key_cache, const py::handle& value_cache,
                                   const py::handle& slot_mapping, const py::kwargs& kw) {
  const std::optional<DType> requested = requested_dtype(keyword(kw, "dtype"));
  const py::array k = to_numpy(key, "key");
  const py::array v = to_numpy(value, "value");
  ref::CacheCopyProblem p;
  p.dtype = tensor_dtype(k, "key", requested, std::nullopt, "");
  tensor_dtype(v, "value", requested, p.dtype, "key");
  TokenTensor kt = read_tokens(k, "key", kTokenDims, p.dtype);
  TokenTensor vt = read_tokens(v, "value", kTokenDims, p.dtype);
  const auto shape = [](const ref::TokenLayout& l) {
    return std::vector<int64_t>{l.num_tokens, l.num_heads, l.head_size};
  };
  if (shape(vt.layout) != shape(kt.layout)) {
    throw py::value_error("value: expected the shape of key " + shape_text(shape(kt.layout)) +
                          ", got " + shape_text(shape(vt.layout)));
  }
  take_cache(p, read_cache_args(key_cache, value_cache, kw, p.dtype, "key", requested,
                                kt.layout.head_size));
  if (kt.layout.num_heads != p.cache.num_kv_heads) {
    throw py::value_error(
        "key: " + std::to_string(kt.layout.num_heads) +
        " heads, but the caches have num_kv_heads = " + std::to_string(p.cache.num_kv_heads));
  }
  p.key_layout = kt.layout;
  p.value_layout = vt.layout;
  p.key = std::move(kt.bytes);
  p.value = std::move(vt.bytes);
  const py::object dequantize = keyword(kw, "dequantize");
  try {
    p.dequantize = !dequantize.is_none() && dequantize.cast<bool>();
  } catch (const py::cast_error&) {
    throw py::type_error("dequantize: expected a bool, got " +
                         py::repr(dequantize).cast<std::string>());
  }
  p.slot_mapping =
      read_integers(slot_mapping, "slot_mapping", {p.key_layout.num_tokens}, "[num_tokens]");
  validate(p);
  return p;
}

}  // namespace pagecheck::python
