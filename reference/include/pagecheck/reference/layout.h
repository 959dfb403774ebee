#pragma once
/// The KV-cache descriptor and the contiguous token-tensor layout: the one description of
/// where every element lives, used by every part of pagecheck. The offset arithmetic here is
/// the reference's own; kernels see the same strides only through the plugin ABI.
#include <array>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::ref {

/// Named page layouts. The tag is for capabilities and reports only: every offset is computed
/// from the strides, so any kind (and any padding) goes through the same arithmetic.
enum class CacheKind : int32_t {
  kXSplit = 0,  ///< 2023 layout: key [blocks, kv_heads, head_size/x, block_size, x],
                ///< value [blocks, kv_heads, head_size, block_size]
  kNHD = 1,     ///< page [block_size, kv_heads, head_size] for K and for V
  kHND = 2,     ///< page [kv_heads, block_size, head_size] for K and for V
};
/// "x_split", "nhd", "hnd".
const char* cache_kind_name(CacheKind kind);
/// Inverse of cache_kind_name (also accepts "xsplit", "NHD", "HND"); throws
/// std::invalid_argument naming the text.
CacheKind parse_cache_kind(const char* text);

/// How an fp8 cache's codes are scaled back to values: value = code * scale.
enum class ScaleKind : int32_t {
  kNone = 0,       ///< no scales (16/32-bit caches; fp8 caches with an implied scale of 1 are
                   ///< written as kPerTensor with 1.0)
  kPerTensor = 1,  ///< one float32 scale for all of K (k_scale) and one for V (v_scale)
  kPerKvHead = 2,  ///< one float32 scale per KV head for K and for V
};
/// "none", "per_tensor", "per_kv_head".
const char* scale_kind_name(ScaleKind kind);
/// Inverse of scale_kind_name; throws std::invalid_argument naming the text.
ScaleKind parse_scale_kind(const char* text);
/// Scales per tensor (k_scale, v_scale) under `kind`: 0 (none), 1 (per tensor) or
/// num_kv_heads (per KV head).
int64_t scale_count(ScaleKind kind, int64_t num_kv_heads);

/// Strides of one cache tensor (K or V), in elements of the cache dtype. Element
/// (block, head, slot, dim) lives at
///   block * block + head * head + slot * slot + (dim / dim_split) * group + (dim % dim_split) *
///   dim
/// The head dimension is split in groups of dim_split elements (x for x-split keys, head_size
/// for every other tensor, where `group` is then unused and set to 0).
struct CacheTensorStrides {
  int64_t block = 0;      ///< between consecutive blocks (pages)
  int64_t head = 0;       ///< between consecutive kv heads
  int64_t slot = 0;       ///< between consecutive token slots of a block
  int64_t group = 0;      ///< between consecutive dim groups (dim_split < head_size only)
  int64_t dim = 0;        ///< between consecutive dims of one group
  int64_t dim_split = 0;  ///< dims per group: x for x-split keys, head_size otherwise
};

/// One axis of a cache tensor: `size` indices placed `stride` elements apart.
struct CacheAxis {
  const char* name = "";  ///< "block", "head", "slot", "group" (dim / dim_split), "dim"
  int64_t size = 0;       ///< indices along the axis
  int64_t stride = 0;     ///< elements between consecutive indices
};

/// Sizes shared by K and V.
struct CacheShape {
  int64_t num_blocks = 0;    ///< physical blocks (pages) in the pool
  int64_t num_kv_heads = 0;  ///< key/value heads
  int64_t head_size = 0;     ///< elements per head
  int64_t block_size = 0;    ///< token slots per block
};

/// Extra elements added to one tensor's packed strides by make_cache_layout (0 = packed).
struct TensorPadding {
  int64_t block = 0;  ///< added to the block stride
  int64_t head = 0;   ///< added to the head stride
  int64_t slot = 0;   ///< added to the slot stride (NHD / HND: rows of a page; x-split keys:
                      ///< between the x-vectors of consecutive slots)
  bool any() const { return block || head || slot; }
  bool operator==(const TensorPadding& o) const {
    return block == o.block && head == o.head && slot == o.slot;
  }
  bool operator!=(const TensorPadding& o) const { return !(*this == o); }
};

/// Padding of both cache tensors.
struct CachePadding {
  TensorPadding key;    ///< key padding
  TensorPadding value;  ///< value padding
  bool any() const { return key.any() || value.any(); }
  /// K and V padded alike (engines that allocate K and V with one stride set).
  bool shared() const { return key == value; }
  bool operator==(const CachePadding& o) const { return key == o.key && value == o.value; }
  bool operator!=(const CachePadding& o) const { return !(*this == o); }
};

/// The paged KV cache: sizes, K and V strides, the storage dtype of K and V and how fp8 codes
/// are scaled. Built by make_cache_layout (or field by field for strides an engine passes).
struct PagedCacheLayout {
  CacheKind kind = CacheKind::kXSplit;      ///< tag for capabilities and reports
  DType dtype = DType::kFloat16;            ///< storage dtype of K and V (may be fp8)
  ScaleKind scale_kind = ScaleKind::kNone;  ///< fp8 scales (kNone for 16/32-bit caches)
  int64_t num_blocks = 0;                   ///< physical blocks in the pool
  int64_t num_kv_heads = 0;                 ///< key/value heads
  int64_t head_size = 0;                    ///< elements per head
  int64_t block_size = 0;                   ///< token slots per block
  CacheTensorStrides key;                   ///< key strides
  CacheTensorStrides value;                 ///< value strides
  /// K and V are the two halves of one tensor [num_blocks, 2, page]: the value tensor starts
  /// value_base elements after the key tensor, inside the key buffer (the problem then holds
  /// one buffer, key_cache, and value_cache stays empty).
  bool combined = false;
  int64_t value_base = 0;  ///< elements from key[0,0,0,0] to value[0,0,0,0] when combined

  CacheShape shape() const { return {num_blocks, num_kv_heads, head_size, block_size}; }
  /// Throws std::invalid_argument naming the offending field: non-positive sizes, a head size
  /// not a multiple of dim_split, strides under which two elements (of K, of V, or of K and V
  /// when combined) share an offset, a scale kind on a 16/32-bit cache or none on an fp8 cache,
  /// 64-bit overflow. docs/dtypes.md states the rule.
  void validate() const;
  /// Element offset of key[block, head, slot, dim] from the key buffer's start. (Argument
  /// order block, head, slot, dim everywhere; the old key_offset(block, head, dim, slot) is gone
  /// so that no caller keeps the old order silently.)
  int64_t key_at(int64_t block, int64_t head, int64_t slot, int64_t dim) const;
  /// Element offset of value[block, head, slot, dim] from the value buffer's start (from the
  /// key buffer's start when combined: value_base included).
  int64_t value_at(int64_t block, int64_t head, int64_t slot, int64_t dim) const;
  /// Elements the key buffer must hold (largest offset + 1; both tensors when combined).
  int64_t key_span() const;
  /// Elements the value buffer must hold (0 when combined).
  int64_t value_span() const;
  /// True when the strides are those make_cache_layout gives for kind without padding.
  bool packed() const;
  /// The five axes of tensor `s` (key or value) in the order block, head, slot, group, dim
  /// (size-1 axes included; s.dim_split must be positive): element (block, head, slot, dim) has
  /// the indices (block, head, slot, dim / s.dim_split, dim % s.dim_split).
  std::array<CacheAxis, 5> axes(const CacheTensorStrides& s) const;
  /// Scales per tensor this cache takes: scale_count(scale_kind, num_kv_heads).
  int64_t scale_count() const;
  /// The scale of kv head `kv_head` in `scales` (a problem's k_scale or v_scale): entry 0 per
  /// tensor, entry kv_head per KV head; 1 when `scales` is empty (a cache without scales).
  float scale_at(const std::vector<float>& scales, int64_t kv_head) const;
};

/// The one builder: strides of `kind` for `shape`, densely packed plus `padding` (each entry
/// >= 0). When combined, K and V must be padded alike; the page of K is followed by the page of
/// V inside each block ([num_blocks, 2, page], page = the larger page extent). The strides per
/// kind are tabulated in docs/dtypes.md. Throws std::invalid_argument naming the padding field;
/// does not validate() the result.
PagedCacheLayout make_cache_layout(CacheKind kind, DType dtype, const CacheShape& shape,
                                   const CachePadding& padding = {}, bool combined = false,
                                   ScaleKind scale_kind = ScaleKind::kNone);

/// Contiguous token tensor [num_tokens, num_heads, head_size] with strided tokens and heads
/// (innermost stride 1), e.g. a query sliced out of a fused QKV tensor.
struct TokenLayout {
  int64_t num_tokens = 0;    ///< tokens (query tokens of the batch for attention)
  int64_t num_heads = 0;     ///< heads
  int64_t head_size = 0;     ///< elements per head
  int64_t stride_token = 0;  ///< elements between consecutive tokens
  int64_t stride_head = 0;   ///< elements between consecutive heads

  /// Densely packed [num_tokens, num_heads, head_size].
  static TokenLayout packed(int64_t num_tokens, int64_t num_heads, int64_t head_size);
  /// Throws std::invalid_argument naming `name` and the offending field.
  void validate(const char* name) const;
  /// Element offset of [token][head][dim].
  int64_t offset(int64_t token, int64_t head, int64_t dim) const;
  /// Elements a buffer must hold (largest offset + 1; 0 when empty).
  int64_t span() const;
};

}  // namespace pagecheck::ref
