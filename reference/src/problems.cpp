/// Validation of the host-side problem descriptions (every message names the argument).
#include "pagecheck/reference/problems.h"

#include <algorithm>
#include <cmath>
#include <sstream>
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

}  // namespace

int64_t PagedAttentionProblem::max_context_len() const {
  int64_t longest = 0;
  for (int32_t len : context_lens) longest = std::max<int64_t>(longest, len);
  return longest;
}

int64_t PagedAttentionProblem::host_max_context_len() const {
  return context_len_bound > 0 ? context_len_bound : max_context_len();
}

int64_t PagedAttentionProblem::table_stride() const {
  return block_table_stride > 0 ? block_table_stride : max_blocks_per_seq;
}

std::vector<int32_t> PagedAttentionProblem::strided_block_table() const {
  const int64_t stride = table_stride();
  std::vector<int32_t> table(static_cast<std::size_t>(num_seqs * stride), block_table_padding);
  for (int64_t s = 0; s < num_seqs; ++s) {
    std::copy_n(block_table.begin() + s * max_blocks_per_seq, max_blocks_per_seq,
                table.begin() + s * stride);
  }
  return table;
}

void PagedAttentionProblem::validate() const {
  cache.validate(dtype);
  if (num_seqs <= 0) fail("num_seqs = " + str(num_seqs) + " must be positive");
  if (num_heads <= 0) fail("num_heads = " + str(num_heads) + " must be positive");
  if (num_heads % cache.num_kv_heads != 0) {
    fail("num_heads = " + str(num_heads) +
         " is not a multiple of num_kv_heads = " + str(cache.num_kv_heads));
  }
  if (max_blocks_per_seq <= 0) {
    fail("max_blocks_per_seq = " + str(max_blocks_per_seq) + " must be positive");
  }
  if (!std::isfinite(scale)) fail("scale = " + std::to_string(scale) + " is not finite");
  require_equal("query_layout.num_tokens", query_layout.num_tokens, "num_seqs", num_seqs);
  require_equal("query_layout.num_heads", query_layout.num_heads, "num_heads", num_heads);
  require_equal("query_layout.head_size", query_layout.head_size, "cache.head_size",
                cache.head_size);
  query_layout.validate("query");
  require_buffer("query", query, query_layout.span(), dtype, "query_layout");
  require_buffer("key_cache", key_cache, cache.key_span(), dtype, "the cache layout");
  require_buffer("value_cache", value_cache, cache.value_span(), dtype, "the cache layout");
  require_equal("context_lens.size()", static_cast<int64_t>(context_lens.size()), "num_seqs",
                num_seqs);
  require_equal("block_table.size()", static_cast<int64_t>(block_table.size()),
                "num_seqs * max_blocks_per_seq", num_seqs * max_blocks_per_seq);
  const int64_t capacity = max_blocks_per_seq * cache.block_size;
  if (block_table_stride != 0 && block_table_stride < max_blocks_per_seq) {
    fail("block_table_stride = " + str(block_table_stride) +
         " is below max_blocks_per_seq = " + str(max_blocks_per_seq));
  }
  if (context_len_bound != 0 &&
      (context_len_bound < max_context_len() || context_len_bound > capacity)) {
    fail("context_len_bound = " + str(context_len_bound) + " is outside [largest context = " +
         str(max_context_len()) + ", max_blocks_per_seq * block_size = " + str(capacity) + "]");
  }
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t len = context_lens[s];
    const std::string name = "context_lens[" + str(s) + "] = " + str(len);
    if (len <= 0) fail(name + " must be at least 1");
    if (len > capacity) {
      fail(name + " exceeds max_blocks_per_seq * block_size = " + str(capacity));
    }
    // Only the blocks the sequence uses are checked: entries past them are unused (and
    // deliberately poisoned by the harness).
    const int64_t used_blocks = (len + cache.block_size - 1) / cache.block_size;
    for (int64_t b = 0; b < used_blocks; ++b) {
      const int64_t block = block_table[s * max_blocks_per_seq + b];
      if (block < 0 || block >= cache.num_blocks) {
        fail("block_table[" + str(s) + "][" + str(b) + "] = " + str(block) +
             " is outside [0, num_blocks = " + str(cache.num_blocks) + ")");
      }
    }
  }
  if (!alibi_slopes.empty()) {
    require_equal("alibi_slopes.size()", static_cast<int64_t>(alibi_slopes.size()), "num_heads",
                  num_heads);
    for (std::size_t h = 0; h < alibi_slopes.size(); ++h) {
      if (!std::isfinite(alibi_slopes[h])) {
        fail("alibi_slopes[" + str(static_cast<int64_t>(h)) +
             "] = " + std::to_string(alibi_slopes[h]) + " is not finite");
      }
    }
  }
}

void CacheCopyProblem::validate() const {
  cache.validate(dtype);
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
  require_buffer("key_cache", key_cache, cache.key_span(), dtype, "the cache layout");
  require_buffer("value_cache", value_cache, cache.value_span(), dtype, "the cache layout");
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
