/// The one builder of cache strides (kind + padding -> strides), packed(), and the names of
/// cache kinds and scale kinds. docs/dtypes.md writes the formulas out.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "pagecheck/reference/layout.h"

namespace pagecheck::ref {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("make_cache_layout: " + what);
}

void require_nonnegative(const std::string& field, int64_t value) {
  if (value < 0) fail(field + " = " + std::to_string(value) + " must not be negative");
}

void check_padding(const char* tensor, const TensorPadding& p) {
  const std::string prefix = std::string("padding.") + tensor;
  require_nonnegative(prefix + ".block", p.block);
  require_nonnegative(prefix + ".head", p.head);
  require_nonnegative(prefix + ".slot", p.slot);
}

/// Strides of one page [block_size, kv_heads, head_size] (NHD) or [kv_heads, block_size,
/// head_size] (HND) with padding; `block` is the page extent (block padding not yet added).
CacheTensorStrides page_strides(CacheKind kind, const CacheShape& s, const TensorPadding& p) {
  CacheTensorStrides t;
  t.dim = 1;
  t.dim_split = s.head_size;
  t.group = 0;
  if (kind == CacheKind::kNHD) {
    t.head = s.head_size + p.head;
    t.slot = s.num_kv_heads * t.head + p.slot;
    t.block = s.block_size * t.slot;
  } else {  // HND
    t.slot = s.head_size + p.slot;
    t.head = s.block_size * t.slot + p.head;
    t.block = s.num_kv_heads * t.head;
  }
  return t;
}

/// x-split key [kv_heads, head_size / x, block_size, x] per block: slot padding goes between
/// the x-vectors of consecutive slots.
CacheTensorStrides x_split_key(DType dtype, const CacheShape& s, const TensorPadding& p) {
  CacheTensorStrides t;
  const int64_t x = dtype_x(dtype);
  t.dim = 1;
  t.dim_split = x;
  t.slot = x + p.slot;
  t.group = s.block_size * t.slot;
  t.head = (s.head_size / x) * t.group + p.head;
  t.block = s.num_kv_heads * t.head;
  return t;
}

/// x-split value [kv_heads, head_size, block_size] per block: slot padding goes after the
/// block_size slots of each dim (the dim stride).
CacheTensorStrides x_split_value(const CacheShape& s, const TensorPadding& p) {
  CacheTensorStrides t;
  t.dim_split = s.head_size;
  t.group = 0;
  t.slot = 1;
  t.dim = s.block_size + p.slot;
  t.head = s.head_size * t.dim + p.head;
  t.block = s.num_kv_heads * t.head;
  return t;
}

bool same_strides(const CacheTensorStrides& a, const CacheTensorStrides& b) {
  return a.block == b.block && a.head == b.head && a.slot == b.slot && a.group == b.group &&
         a.dim == b.dim && a.dim_split == b.dim_split;
}

/// The name of one enum value, and another spelling its parser accepts (or nullptr).
template <typename E>
struct Named {
  E value;            ///< the value
  const char* name;   ///< what *_name() writes
  const char* alias;  ///< what parse_*() accepts besides `name`, or nullptr
};

constexpr Named<CacheKind> kCacheKindNames[] = {
    {CacheKind::kXSplit, "x_split", "xsplit"},
    {CacheKind::kNHD, "nhd", "NHD"},
    {CacheKind::kHND, "hnd", "HND"},
};
constexpr Named<ScaleKind> kScaleKindNames[] = {
    {ScaleKind::kNone, "none", nullptr},
    {ScaleKind::kPerTensor, "per_tensor", nullptr},
    {ScaleKind::kPerKvHead, "per_kv_head", nullptr},
};

/// The name of `value` in `names`; throws std::invalid_argument ("<what>: unknown value N").
template <typename E, std::size_t N>
const char* name_in(const Named<E> (&names)[N], const char* what, E value) {
  for (const Named<E>& n : names) {
    if (n.value == value) return n.name;
  }
  throw std::invalid_argument(std::string(what) + ": unknown value " +
                              std::to_string(static_cast<int32_t>(value)));
}

/// The value named (or aliased) `text` in `names`; throws std::invalid_argument naming the text
/// and the names ("<what>: unknown name 't' (expected a, b or c)").
template <typename E, std::size_t N>
E parse_in(const Named<E> (&names)[N], const char* what, const char* text) {
  const std::string t = text ? text : "";
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (t == names[i].name || (names[i].alias != nullptr && t == names[i].alias)) {
      return names[i].value;
    }
    expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ");
    expected += names[i].name;
  }
  throw std::invalid_argument(std::string(what) + ": unknown name '" + t + "' (expected " +
                              expected + ")");
}

}  // namespace

PagedCacheLayout make_cache_layout(CacheKind kind, DType dtype, const CacheShape& shape,
                                   const CachePadding& padding, bool combined,
                                   ScaleKind scale_kind) {
  cache_kind_name(kind);  // throws on a value outside the enum
  dtype_info(dtype);      // likewise
  check_padding("key", padding.key);
  check_padding("value", padding.value);
  if (combined && !padding.shared()) {
    fail("padding of key and value differs, but a combined cache pads K and V alike");
  }
  PagedCacheLayout c;
  c.kind = kind;
  c.dtype = dtype;
  c.scale_kind = scale_kind;
  c.num_blocks = shape.num_blocks;
  c.num_kv_heads = shape.num_kv_heads;
  c.head_size = shape.head_size;
  c.block_size = shape.block_size;
  if (kind == CacheKind::kXSplit) {
    c.key = x_split_key(dtype, shape, padding.key);
    c.value = x_split_value(shape, padding.value);
  } else {
    c.key = page_strides(kind, shape, padding.key);
    c.value = page_strides(kind, shape, padding.value);
  }
  // Here key.block / value.block are the page extents; the block padding comes on top.
  if (combined) {  // [num_blocks, 2, page]: the K page, then the V page, of one block
    const int64_t page = std::max(c.key.block, c.value.block);
    c.combined = true;
    c.value_base = page;
    c.key.block = c.value.block = 2 * page + padding.key.block;
  } else {
    c.key.block += padding.key.block;
    c.value.block += padding.value.block;
  }
  return c;
}

bool PagedCacheLayout::packed() const {
  const PagedCacheLayout p = make_cache_layout(kind, dtype, shape(), {}, combined, scale_kind);
  return same_strides(key, p.key) && same_strides(value, p.value) && value_base == p.value_base;
}

const char* cache_kind_name(CacheKind kind) {
  return name_in(kCacheKindNames, "cache kind", kind);
}

CacheKind parse_cache_kind(const char* text) {
  return parse_in(kCacheKindNames, "cache kind", text);
}

const char* scale_kind_name(ScaleKind kind) {
  return name_in(kScaleKindNames, "scale kind", kind);
}

ScaleKind parse_scale_kind(const char* text) {
  return parse_in(kScaleKindNames, "scale kind", text);
}

}  // namespace pagecheck::ref
