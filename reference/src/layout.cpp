/// Paged-cache and token layouts: validation (generic over the strides) and the reference's
/// own offsets. The builder of named kinds is in cache_builder.cpp.
#include "pagecheck/reference/layout.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pagecheck::ref {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

std::string str(int64_t value) {
  return std::to_string(value);
}

void require_positive(const std::string& where, const std::string& field, int64_t value) {
  if (value <= 0) fail(where, field + " = " + str(value) + " must be positive");
}

/// Requires stride `field` >= `extent` (the span of one inner item), so items never overlap.
void require_stride(const std::string& where, const char* field, int64_t stride, const char* inner,
                    int64_t extent) {
  if (stride < extent) {
    fail(where, std::string(field) + " = " + str(stride) + " is smaller than " + inner + " = " +
                    str(extent) + " (entries would overlap)");
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

/// Largest element span of any tensor (bytes = span * element size must fit in int64 too).
constexpr int64_t kMaxSpan = std::numeric_limits<int64_t>::max() / 4;

/// One axis of a strided tensor: `size` indices placed `stride` elements apart.
struct Axis {
  std::string name;  ///< "key.slot", "value_base", ...
  int64_t size = 0;
  int64_t stride = 0;
};

/// The axes of one cache tensor named "<tensor>.<axis>" (size-1 axes included; the checks skip
/// them).
std::vector<Axis> axes_of(const std::string& tensor, const CacheTensorStrides& s,
                          const PagedCacheLayout& c) {
  std::vector<Axis> axes;
  for (const CacheAxis& a : c.axes(s)) axes.push_back({tensor + "." + a.name, a.size, a.stride});
  return axes;
}

/// Requires that no two index tuples of `axes` share an offset: with the axes of size > 1
/// sorted by stride, each stride must be at least the span of all axes of smaller stride
/// (a mixed-radix layout, padding allowed). Returns the span of all axes.
int64_t check_no_overlap(const std::string& where, std::vector<Axis> axes) {
  axes.erase(std::remove_if(axes.begin(), axes.end(), [](const Axis& a) { return a.size <= 1; }),
             axes.end());
  std::stable_sort(axes.begin(), axes.end(),
                   [](const Axis& a, const Axis& b) { return a.stride < b.stride; });
  int64_t span = 1;  // one element
  std::string inner;
  for (const Axis& a : axes) {
    if (a.stride < span) {
      fail(where, a.name + " = " + str(a.stride) + " is smaller than " +
                      (inner.empty() ? std::string("one element = 1")
                                     : "the span " + str(span) + " of " + inner) +
                      " (entries would overlap)");
    }
    span = span_of(where, a.size, a.stride, span);
    inner += (inner.empty() ? "" : ", ") + a.name;
  }
  return span;
}

/// The (stride, size) pairs of the axes of size > 1 with stride >= `from`, sorted.
std::vector<std::pair<int64_t, int64_t>> outer_axes(const std::vector<Axis>& axes, int64_t from) {
  std::vector<std::pair<int64_t, int64_t>> outer;
  for (const Axis& a : axes) {
    if (a.size > 1 && a.stride >= from) outer.emplace_back(a.stride, a.size);
  }
  std::sort(outer.begin(), outer.end());
  return outer;
}

void check_tensor(const std::string& where, const std::string& tensor, const CacheTensorStrides& s,
                  const PagedCacheLayout& c) {
  require_positive(where, tensor + ".dim_split", s.dim_split);
  if (c.head_size % s.dim_split != 0) {
    fail(where, "head_size = " + str(c.head_size) + " is not a multiple of " + tensor +
                    ".dim_split = " + str(s.dim_split) + " for " + dtype_name(c.dtype));
  }
}

}  // namespace

void PagedCacheLayout::validate() const {
  const std::string where = "cache layout";
  require_positive(where, "num_blocks", num_blocks);
  require_positive(where, "num_kv_heads", num_kv_heads);
  require_positive(where, "head_size", head_size);
  require_positive(where, "block_size", block_size);
  const DTypeInfo& info = dtype_info(dtype);  // throws on a value outside the enum
  cache_kind_name(kind);                      // likewise
  scale_kind_name(scale_kind);
  if (!info.fp8 && scale_kind != ScaleKind::kNone) {
    fail(where, std::string("scale_kind = ") + scale_kind_name(scale_kind) +
                    " needs an fp8 dtype, not " + info.name);
  }
  if (info.fp8 && scale_kind == ScaleKind::kNone) {
    fail(where, std::string("scale_kind = none with the fp8 dtype ") + info.name +
                    " (an fp8 cache has scales; an implied scale of 1 is per_tensor 1.0)");
  }
  check_tensor(where, "key", key, *this);
  check_tensor(where, "value", value, *this);
  const std::vector<Axis> key_axes = axes_of("key", key, *this);
  const std::vector<Axis> value_axes = axes_of("value", value, *this);
  int64_t key_extent = check_no_overlap(where, key_axes);
  int64_t value_extent = check_no_overlap(where, value_axes);
  if (!combined) {
    if (value_base != 0) {
      fail(where, "value_base = " + str(value_base) + " must be 0 unless combined");
    }
  } else {
    // K and V interleave inside one allocation: below value_base each tensor must fit in
    // [0, value_base) (the axis "value_base" of size 2 separates them), and above it both
    // must share the same axes (the blocks), so that their pages alternate.
    require_positive(where, "value_base", value_base);
    const Axis kv{"value_base", 2, value_base};
    std::vector<Axis> with_kv = key_axes;
    with_kv.push_back(kv);
    key_extent = check_no_overlap(where, with_kv);
    with_kv = value_axes;
    with_kv.push_back(kv);
    value_extent = check_no_overlap(where, with_kv);
    if (outer_axes(key_axes, value_base) != outer_axes(value_axes, value_base)) {
      fail(where, "combined key and value must share their strides at or above value_base = " +
                      str(value_base) + " (key.block = " + str(key.block) +
                      ", value.block = " + str(value.block) + ")");
    }
  }
  if (key_extent > kMaxSpan || value_extent > kMaxSpan) {
    fail(where,
         "num_blocks = " + str(num_blocks) + " makes the cache too large for 64-bit offsets");
  }
}

std::array<CacheAxis, 5> PagedCacheLayout::axes(const CacheTensorStrides& s) const {
  return {{{"block", num_blocks, s.block},
           {"head", num_kv_heads, s.head},
           {"slot", block_size, s.slot},
           {"group", head_size / s.dim_split, s.group},
           {"dim", s.dim_split, s.dim}}};
}

int64_t scale_count(ScaleKind kind, int64_t num_kv_heads) {
  return kind == ScaleKind::kPerTensor ? 1 : kind == ScaleKind::kPerKvHead ? num_kv_heads : 0;
}

int64_t PagedCacheLayout::scale_count() const {
  return ref::scale_count(scale_kind, num_kv_heads);
}

float PagedCacheLayout::scale_at(const std::vector<float>& scales, int64_t kv_head) const {
  if (scales.empty()) return 1.0f;
  return scales[scale_kind == ScaleKind::kPerKvHead ? kv_head : 0];
}

int64_t PagedCacheLayout::key_at(int64_t block, int64_t head, int64_t slot, int64_t dim) const {
  return block * key.block + head * key.head + slot * key.slot + (dim / key.dim_split) * key.group +
         (dim % key.dim_split) * key.dim;
}

int64_t PagedCacheLayout::value_at(int64_t block, int64_t head, int64_t slot, int64_t dim) const {
  return (combined ? value_base : 0) + block * value.block + head * value.head + slot * value.slot +
         (dim / value.dim_split) * value.group + (dim % value.dim_split) * value.dim;
}

int64_t PagedCacheLayout::key_span() const {
  if (num_blocks <= 0 || num_kv_heads <= 0 || head_size <= 0 || block_size <= 0) return 0;
  if (key.dim_split <= 0 || value.dim_split <= 0) return 0;
  const int64_t last_key = key_at(num_blocks - 1, num_kv_heads - 1, block_size - 1, head_size - 1);
  if (!combined) return last_key + 1;
  const int64_t last_value =
      value_at(num_blocks - 1, num_kv_heads - 1, block_size - 1, head_size - 1);
  return std::max(last_key, last_value) + 1;
}

int64_t PagedCacheLayout::value_span() const {
  if (combined) return 0;
  if (num_blocks <= 0 || num_kv_heads <= 0 || head_size <= 0 || block_size <= 0) return 0;
  if (value.dim_split <= 0) return 0;
  return value_at(num_blocks - 1, num_kv_heads - 1, block_size - 1, head_size - 1) + 1;
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
    fail(where, "num_tokens = " + str(num_tokens) + " must not be negative");
  }
  require_positive(where, "num_heads", num_heads);
  require_positive(where, "head_size", head_size);
  require_stride(where, "stride_head", stride_head, "head_size", head_size);
  require_stride(where, "stride_token", stride_token, "the extent of one token",
                 span_of(where, num_heads, stride_head, head_size));
  if (num_tokens > 0 && stride_token > kMaxSpan / num_tokens) {
    fail(where, "num_tokens = " + str(num_tokens) + " makes the tensor too large");
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
