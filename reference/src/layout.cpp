/// Paged-cache and token layouts: packed builders, validation and the reference's own offsets.
#include "pagecheck/reference/layout.h"

#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pagecheck::ref {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

void require_positive(const std::string& where, const char* field, int64_t value) {
  if (value <= 0)
    fail(where, std::string(field) + " = " + std::to_string(value) + " must be positive");
}

/// Requires stride `field` >= `extent` (the span of one inner item), so items never overlap.
void require_stride(const std::string& where, const char* field, int64_t stride, const char* inner,
                    int64_t extent) {
  if (stride < extent) {
    fail(where, std::string(field) + " = " + std::to_string(stride) + " is smaller than " + inner +
                    " = " + std::to_string(extent) + " (entries would overlap)");
  }
}

/// Span (largest offset + 1) of `count` items of `extent` elements placed `stride` apart;
/// throws naming `where` when it does not fit in 64 bits.
int64_t span_of(const std::string& where, int64_t count, int64_t stride, int64_t extent) {
  int64_t product = 0, span = 0;
  if (__builtin_mul_overflow(count - 1, stride, &product) ||
      __builtin_add_overflow(product, extent, &span)) {
    fail(where, "strides too large: the tensor does not fit in 64-bit offsets");
  }
  return span;
}

constexpr int64_t kMaxSpan = std::numeric_limits<int64_t>::max() / 4;

}  // namespace

PagedCacheLayout PagedCacheLayout::packed(DType dtype, int64_t num_blocks, int64_t num_kv_heads,
                                          int64_t head_size, int64_t block_size) {
  PagedCacheLayout layout;
  layout.num_blocks = num_blocks;
  layout.num_kv_heads = num_kv_heads;
  layout.head_size = head_size;
  layout.block_size = block_size;
  layout.x = dtype_x(dtype);
  layout.key_stride_slot = layout.x;
  layout.key_stride_group = block_size * layout.x;
  layout.key_stride_head = head_size * block_size;
  layout.key_stride_block = num_kv_heads * head_size * block_size;
  layout.value_stride_dim = block_size;
  layout.value_stride_head = head_size * block_size;
  layout.value_stride_block = num_kv_heads * head_size * block_size;
  return layout;
}

void PagedCacheLayout::validate(DType dtype) const {
  const std::string where = "cache layout";
  require_positive(where, "num_blocks", num_blocks);
  require_positive(where, "num_kv_heads", num_kv_heads);
  require_positive(where, "head_size", head_size);
  require_positive(where, "block_size", block_size);
  const int64_t expected_x = dtype_x(dtype);
  if (x != expected_x) {
    fail(where, "x = " + std::to_string(x) + " does not match 16 bytes / element size = " +
                    std::to_string(expected_x) + " for " + dtype_name(dtype));
  }
  if (head_size % x != 0) {
    fail(where, "head_size " + std::to_string(head_size) +
                    " is not a multiple of x = " + std::to_string(x) + " for " + dtype_name(dtype));
  }
  // Key: slot inside group inside head inside block, each level not overlapping the next.
  require_stride(where, "key_stride_slot", key_stride_slot, "x", x);
  const int64_t group_extent = span_of(where, block_size, key_stride_slot, x);
  require_stride(where, "key_stride_group", key_stride_group, "block_size slots of x elements",
                 group_extent);
  const int64_t key_head_extent = span_of(where, head_size / x, key_stride_group, group_extent);
  require_stride(where, "key_stride_head", key_stride_head, "the extent of one key head",
                 key_head_extent);
  const int64_t key_block_extent = span_of(where, num_kv_heads, key_stride_head, key_head_extent);
  require_stride(where, "key_stride_block", key_stride_block, "the extent of one key block",
                 key_block_extent);
  // Value: slot (stride 1) inside dim inside head inside block.
  require_stride(where, "value_stride_dim", value_stride_dim, "block_size", block_size);
  const int64_t value_head_extent = span_of(where, head_size, value_stride_dim, block_size);
  require_stride(where, "value_stride_head", value_stride_head, "the extent of one value head",
                 value_head_extent);
  const int64_t value_block_extent =
      span_of(where, num_kv_heads, value_stride_head, value_head_extent);
  require_stride(where, "value_stride_block", value_stride_block, "the extent of one value block",
                 value_block_extent);
  if (key_stride_block > kMaxSpan / num_blocks || value_stride_block > kMaxSpan / num_blocks) {
    fail(where, "num_blocks = " + std::to_string(num_blocks) + " makes the cache too large");
  }
}

int64_t PagedCacheLayout::key_offset(int64_t block, int64_t head, int64_t dim, int64_t slot) const {
  return block * key_stride_block + head * key_stride_head + (dim / x) * key_stride_group +
         slot * key_stride_slot + dim % x;
}

int64_t PagedCacheLayout::value_offset(int64_t block, int64_t head, int64_t dim,
                                       int64_t slot) const {
  return block * value_stride_block + head * value_stride_head + dim * value_stride_dim + slot;
}

int64_t PagedCacheLayout::key_span() const {
  if (num_blocks <= 0 || num_kv_heads <= 0 || head_size <= 0 || block_size <= 0) return 0;
  return key_offset(num_blocks - 1, num_kv_heads - 1, head_size - 1, block_size - 1) + 1;
}

int64_t PagedCacheLayout::value_span() const {
  if (num_blocks <= 0 || num_kv_heads <= 0 || head_size <= 0 || block_size <= 0) return 0;
  return value_offset(num_blocks - 1, num_kv_heads - 1, head_size - 1, block_size - 1) + 1;
}

TokenLayout TokenLayout::packed(int64_t num_tokens, int64_t num_heads, int64_t head_size) {
  TokenLayout layout;
  layout.num_tokens = num_tokens;
  layout.num_heads = num_heads;
  layout.head_size = head_size;
  layout.stride_head = head_size;
  layout.stride_token = num_heads * head_size;
  return layout;
}

void TokenLayout::validate(const char* name) const {
  const std::string where = std::string(name) + " layout";
  if (num_tokens < 0) {
    fail(where, "num_tokens = " + std::to_string(num_tokens) + " must not be negative");
  }
  require_positive(where, "num_heads", num_heads);
  require_positive(where, "head_size", head_size);
  require_stride(where, "stride_head", stride_head, "head_size", head_size);
  require_stride(where, "stride_token", stride_token, "the extent of one token",
                 span_of(where, num_heads, stride_head, head_size));
  if (num_tokens > 0 && stride_token > kMaxSpan / num_tokens) {
    fail(where, "num_tokens = " + std::to_string(num_tokens) + " makes the tensor too large");
  }
}

int64_t TokenLayout::offset(int64_t token, int64_t head, int64_t dim) const {
  return token * stride_token + head * stride_head + dim;
}

int64_t TokenLayout::span() const {
  if (num_tokens <= 0 || num_heads <= 0 || head_size <= 0) return 0;
  return offset(num_tokens - 1, num_heads - 1, head_size - 1) + 1;
}

}  // namespace pagecheck::ref
