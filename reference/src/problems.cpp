/// Validation of the host-side problem descriptions (every message names the argument).
#include "pagecheck/reference/problems.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pagecheck::ref {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument(what);
}

std::string str(int64_t value) {
  return std::to_string(value);
}

/// Requires a raw buffer of exactly `elements` elements of `dtype`.
void require_buffer(const char* name, const std::vector<std::byte>& buffer, int64_t elements,
                    DType dtype, const char* layout_name) {
  const int64_t expected = elements * static_cast<int64_t>(dtype_size(dtype));
  if (static_cast<int64_t>(buffer.size()) != expected) {
    fail(std::string(name) + ": buffer holds " + str(static_cast<int64_t>(buffer.size())) +
         " bytes but " + layout_name + " needs " + str(expected) + " (" + str(elements) + " " +
         dtype_name(dtype) + " elements)");
  }
}

/// Requires `actual` == `expected` for a field that must agree between two descriptions.
void require_equal(const std::string& field, int64_t actual, const std::string& other,
                   int64_t expected) {
  if (actual != expected) {
    fail(field + " = " + str(actual) + " does not match " + other + " = " + str(expected));
  }
}

/// Requires every entry of `values` (named `name`) to be finite.
void require_finite(const char* name, const std::vector<float>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      fail(std::string(name) + "[" + str(static_cast<int64_t>(i)) +
           "] = " + std::to_string(values[i]) + " is not finite");
    }
  }
}

/// Requires `dtype` to be one a query, output or contiguous K/V tensor may have.
void require_query_dtype(const char* field, DType dtype) {
  if (!dtype_info(dtype).query_dtype) {
    fail(std::string(field) + " = " + dtype_name(dtype) +
         " cannot be the dtype of a query, output or contiguous key/value tensor");
  }
}

/// Requires the scales `name` to match cache.scale_kind: none, 1 or num_kv_heads entries,
/// each finite and positive.
void require_scales(const char* name, const std::vector<float>& scales,
                    const PagedCacheLayout& cache) {
  const int64_t expected = cache.scale_count();
  const char* what = cache.scale_kind == ScaleKind::kPerTensor ? "1 entry for scale_kind per_tensor"
                     : cache.scale_kind == ScaleKind::kPerKvHead
                         ? "num_kv_heads entries for scale_kind per_kv_head"
                         : "no entries for scale_kind none";
  if (static_cast<int64_t>(scales.size()) != expected) {
    fail(std::string(name) + ".size() = " + str(static_cast<int64_t>(scales.size())) +
         " does not match " + what + " (" + str(expected) + ")");
  }
  for (std::size_t i = 0; i < scales.size(); ++i) {
    if (!std::isfinite(scales[i]) || !(scales[i] > 0)) {
      fail(std::string(name) + "[" + str(static_cast<int64_t>(i)) +
           "] = " + std::to_string(scales[i]) + " must be finite and positive");
    }
  }
}

/// The ragged-batch checks against a cache with `block_size` slots per block.
void validate_batch(const RaggedBatch& b, const PagedCacheLayout& cache, int64_t query_rows) {
  if (b.num_seqs <= 0) fail("num_seqs = " + str(b.num_seqs) + " must be positive");
  if (b.max_blocks_per_seq <= 0) {
    fail("max_blocks_per_seq = " + str(b.max_blocks_per_seq) + " must be positive");
  }
  require_equal("context_lens.size()", static_cast<int64_t>(b.context_lens.size()), "num_seqs",
                b.num_seqs);
  require_equal("block_table.size()", static_cast<int64_t>(b.block_table.size()),
                "num_seqs * max_blocks_per_seq", b.num_seqs * b.max_blocks_per_seq);
  if (!b.query_start.empty()) {
    require_equal("query_start.size()", static_cast<int64_t>(b.query_start.size()), "num_seqs + 1",
                  b.num_seqs + 1);
    if (b.query_start[0] != 0) fail("query_start[0] = " + str(b.query_start[0]) + " must be 0");
    for (int64_t s = 0; s < b.num_seqs; ++s) {
      if (b.query_start[s + 1] < b.query_start[s]) {
        fail("query_start[" + str(s + 1) + "] = " + str(b.query_start[s + 1]) +
             " is below query_start[" + str(s) + "] = " + str(b.query_start[s]));
      }
    }
  }
  require_equal("query_layout.num_tokens", query_rows, "the batch's query tokens",
                b.num_query_tokens());
  const int64_t capacity = b.max_blocks_per_seq * cache.block_size;
  if (b.block_table_stride != 0 && b.block_table_stride < b.max_blocks_per_seq) {
    fail("block_table_stride = " + str(b.block_table_stride) +
         " is below max_blocks_per_seq = " + str(b.max_blocks_per_seq));
  }
  if (b.context_len_bound != 0 &&
      (b.context_len_bound < b.max_context_len() || b.context_len_bound > capacity)) {
    fail("context_len_bound = " + str(b.context_len_bound) + " is outside [largest context = " +
         str(b.max_context_len()) + ", max_blocks_per_seq * block_size = " + str(capacity) + "]");
  }
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    const int64_t len = b.context_lens[s];
    const std::string name = "context_lens[" + str(s) + "] = " + str(len);
    if (len < 0) fail(name + " must not be negative");
    if (len > capacity) {
      fail(name + " exceeds max_blocks_per_seq * block_size = " + str(capacity));
    }
    // A padding row (context 0) may have any number of query rows; otherwise the query's
    // tokens are the last of the context.
    if (len > 0 && b.query_len(s) > len) {
      fail(name + " is shorter than its query of " + str(b.query_len(s)) + " tokens");
    }
    // Only the blocks the sequence uses are checked: entries past them are unused (and
    // deliberately poisoned by the harness).
    const int64_t used_blocks = (len + cache.block_size - 1) / cache.block_size;
    for (int64_t blk = 0; blk < used_blocks; ++blk) {
      const int64_t block = b.block_table[s * b.max_blocks_per_seq + blk];
      if (block < 0 || block >= cache.num_blocks) {
        fail("block_table[" + str(s) + "][" + str(blk) + "] = " + str(block) +
             " is outside [0, num_blocks = " + str(cache.num_blocks) + ")");
      }
    }
  }
}

/// The attention features' checks for `num_heads` query heads.
void validate_features(const AttentionFeatures& f, int64_t num_heads) {
  if (!f.alibi_slopes.empty()) {
    require_equal("alibi_slopes.size()", static_cast<int64_t>(f.alibi_slopes.size()), "num_heads",
                  num_heads);
    require_finite("alibi_slopes", f.alibi_slopes);
  }
  if (!f.sinks.empty()) {
    require_equal("sinks.size()", static_cast<int64_t>(f.sinks.size()), "num_heads", num_heads);
    require_finite("sinks", f.sinks);
  }
  if (f.window < 0) fail("window = " + str(f.window) + " must not be negative");
  if (!std::isfinite(f.soft_cap) || f.soft_cap < 0) {
    fail("soft_cap = " + std::to_string(f.soft_cap) + " must be finite and not negative");
  }
}

/// Requires the cache's dtype to be `dtype` or an fp8 dtype (codes converted on the way).
void require_cache_dtype(const char* field, DType dtype, const PagedCacheLayout& cache) {
  if (cache.dtype != dtype && !dtype_info(cache.dtype).fp8) {
    fail(std::string("cache.dtype = ") + dtype_name(cache.dtype) + " differs from " + field +
         " = " + dtype_name(dtype) + " (only an fp8 cache may differ)");
  }
}

}  // namespace

void PagedAttentionProblem::validate() const {
  cache.validate();
  require_query_dtype("dtype", dtype);
  require_cache_dtype("dtype", dtype, cache);
  if (num_heads <= 0) fail("num_heads = " + str(num_heads) + " must be positive");
  if (num_heads % cache.num_kv_heads != 0) {
    fail("num_heads = " + str(num_heads) +
         " is not a multiple of num_kv_heads = " + str(cache.num_kv_heads));
  }
  if (!std::isfinite(scale)) fail("scale = " + std::to_string(scale) + " is not finite");
  require_equal("query_layout.num_heads", query_layout.num_heads, "num_heads", num_heads);
  require_equal("query_layout.head_size", query_layout.head_size, "cache.head_size",
                cache.head_size);
  query_layout.validate("query");
  validate_batch(batch, cache, query_layout.num_tokens);
  validate_features(features, num_heads);
  require_scales("k_scale", k_scale, cache);
  require_scales("v_scale", v_scale, cache);
  require_buffer("query", query, query_layout.span(), dtype, "query_layout");
  require_buffer("key_cache", key_cache, cache.key_span(), cache.dtype, "the cache layout");
  require_buffer("value_cache", value_cache, cache.value_span(), cache.dtype, "the cache layout");
}

void CacheCopyProblem::validate() const {
  cache.validate();
  if (dtype != cache.dtype) {
    require_query_dtype("dtype", dtype);
    require_cache_dtype("dtype", dtype, cache);
  }
  if (dequantize && (dtype == cache.dtype || !dtype_info(cache.dtype).fp8)) {
    fail(std::string("dequantize = true needs an fp8 cache and a 16/32-bit dtype (cache.dtype = ") +
         dtype_name(cache.dtype) + ", dtype = " + dtype_name(dtype) + ")");
  }
  require_equal("key_layout.num_heads", key_layout.num_heads, "cache.num_kv_heads",
                cache.num_kv_heads);
  require_equal("key_layout.head_size", key_layout.head_size, "cache.head_size", cache.head_size);
  require_equal("value_layout.num_heads", value_layout.num_heads, "cache.num_kv_heads",
                cache.num_kv_heads);
  require_equal("value_layout.head_size", value_layout.head_size, "cache.head_size",
                cache.head_size);
  require_equal("value_layout.num_tokens", value_layout.num_tokens, "key_layout.num_tokens",
                key_layout.num_tokens);
  key_layout.validate("key");
  value_layout.validate("value");
  require_equal("slot_mapping.size()", static_cast<int64_t>(slot_mapping.size()),
                "key_layout.num_tokens", key_layout.num_tokens);
  require_scales("k_scale", k_scale, cache);
  require_scales("v_scale", v_scale, cache);
  require_buffer("key_cache", key_cache, cache.key_span(), cache.dtype, "the cache layout");
  require_buffer("value_cache", value_cache, cache.value_span(), cache.dtype, "the cache layout");
  require_buffer("key", key, key_layout.span(), dtype, "key_layout");
  require_buffer("value", value, value_layout.span(), dtype, "value_layout");
  const int64_t num_slots = cache.num_blocks * cache.block_size;
  for (std::size_t t = 0; t < slot_mapping.size(); ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < -1 || slot >= num_slots) {
      fail("slot_mapping[" + str(static_cast<int64_t>(t)) + "] = " + str(slot) +
           " is outside [-1, num_blocks * block_size = " + str(num_slots) + ")");
    }
  }
}

}  // namespace pagecheck::ref
