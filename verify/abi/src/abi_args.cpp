/// Problem vocabulary -> plugin ABI v2 argument structs (see abi_args.h).
#include "pagecheck/verify/abi_args.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace pagecheck::verify {

static_assert(static_cast<int>(DType::kFloat32) == PC_DTYPE_FLOAT32 &&
                  static_cast<int>(DType::kFloat16) == PC_DTYPE_FLOAT16 &&
                  static_cast<int>(DType::kBFloat16) == PC_DTYPE_BFLOAT16 &&
                  static_cast<int>(DType::kFloat8E4M3) == PC_DTYPE_FP8_E4M3 &&
                  static_cast<int>(DType::kFloat8E5M2) == PC_DTYPE_FP8_E5M2,
              "DType and pc_dtype share their values");
static_assert(static_cast<int>(ref::CacheKind::kXSplit) == PC_CACHE_X_SPLIT &&
                  static_cast<int>(ref::CacheKind::kNHD) == PC_CACHE_NHD &&
                  static_cast<int>(ref::CacheKind::kHND) == PC_CACHE_HND,
              "CacheKind and pc_cache_kind share their values");
static_assert(static_cast<int>(ref::ScaleKind::kNone) == PC_SCALE_NONE &&
                  static_cast<int>(ref::ScaleKind::kPerTensor) == PC_SCALE_PER_TENSOR &&
                  static_cast<int>(ref::ScaleKind::kPerKvHead) == PC_SCALE_PER_KV_HEAD,
              "ScaleKind and pc_scale_kind share their values");

pc_dtype to_abi(DType dtype) {
  return static_cast<pc_dtype>(dtype);
}
pc_cache_kind to_abi(ref::CacheKind kind) {
  return static_cast<pc_cache_kind>(kind);
}
pc_scale_kind to_abi(ref::ScaleKind kind) {
  return static_cast<pc_scale_kind>(kind);
}

namespace {

/// Throws std::invalid_argument "<fn>: <what> is NULL ..." when a needed pointer is missing.
template <typename T>
const T* needed(const T* pointer, bool needed_here, const char* fn, const char* what,
                const char* why) {
  if (needed_here && pointer == nullptr) {
    throw std::invalid_argument(std::string(fn) + ": pointers." + what + " is NULL but " + why);
  }
  return needed_here ? pointer : nullptr;
}

pc_cache_strides strides_of(const ref::CacheTensorStrides& s) {
  return pc_cache_strides{s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
}

/// The value tensor's device pointer: the caller's, or value_base elements into the key buffer.
template <typename Pointer>
Pointer value_pointer(const ref::PagedCacheLayout& c, Pointer key, Pointer value) {
  if (!c.combined) return value;
  if (key == nullptr) return nullptr;
  using Byte =
      std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
  return static_cast<Byte*>(key) + c.value_base * static_cast<int64_t>(dtype_size(c.dtype));
}

void require_tokens(const char* fn, const char* name, const ref::TokenLayout& layout,
                    int64_t tokens, int64_t heads, int64_t head_size) {
  if (layout.num_tokens != tokens || layout.num_heads != heads || layout.head_size != head_size) {
    throw std::invalid_argument(
        std::string(fn) + ": " + name + " is [" + std::to_string(layout.num_tokens) + ", " +
        std::to_string(layout.num_heads) + ", " + std::to_string(layout.head_size) +
        "] but the problem needs [" + std::to_string(tokens) + ", " + std::to_string(heads) + ", " +
        std::to_string(head_size) + "]");
  }
}

}  // namespace

pc_kv_cache to_abi(const ref::PagedCacheLayout& c, const float* k_scale_dev,
                   const float* v_scale_dev) {
  const bool scaled = c.scale_kind != ref::ScaleKind::kNone;
  pc_kv_cache out{};
  out.struct_size = sizeof out;
  out.kind = to_abi(c.kind);
  out.dtype = to_abi(c.dtype);
  out.scale_kind = to_abi(c.scale_kind);
  out.num_blocks = c.num_blocks;
  out.num_kv_heads = c.num_kv_heads;
  out.head_size = c.head_size;
  out.block_size = c.block_size;
  out.key = strides_of(c.key);
  out.value = strides_of(c.value);
  out.combined = c.combined ? 1 : 0;
  out.value_base = c.combined ? c.value_base : 0;
  out.k_scale = needed(k_scale_dev, scaled, "to_abi", "k_scale", "the cache has scales");
  out.v_scale = needed(v_scale_dev, scaled, "to_abi", "v_scale", "the cache has scales");
  return out;
}

pc_paged_attention_args attention_args(const ref::PagedAttentionProblem& p,
                                       const ref::TokenLayout& out_layout,
                                       const AttentionPointers& ptr) {
  constexpr const char* fn = "attention_args";
  const ref::RaggedBatch& b = p.batch;
  const ref::AttentionFeatures& f = p.features;
  const int64_t rows = b.num_query_tokens();
  require_tokens(fn, "out_layout", out_layout, rows, p.num_heads, p.head_size());

  pc_paged_attention_args a{};
  a.struct_size = sizeof a;
  a.dtype = to_abi(p.dtype);
  a.num_heads = p.num_heads;
  a.scale = p.scale;
  a.query = ptr.query;
  a.query_stride_token = p.query_layout.stride_token;
  a.query_stride_head = p.query_layout.stride_head;
  a.key_cache = ptr.key_cache;
  a.value_cache = value_pointer(p.cache, ptr.key_cache, ptr.value_cache);
  a.cache = to_abi(p.cache, ptr.k_scale, ptr.v_scale);

  pc_ragged_batch& batch = a.batch;
  batch.struct_size = sizeof batch;
  batch.num_seqs = b.num_seqs;
  batch.num_query_tokens = rows;
  batch.max_query_len = b.query_start.empty() ? 1 : b.max_query_len();
  batch.query_start = needed(ptr.query_start, !b.query_start.empty(), fn, "query_start",
                             "the batch has query_start");
  batch.context_lens = ptr.context_lens;
  batch.block_table = ptr.block_table;
  batch.block_table_stride = b.table_stride();
  batch.max_blocks_per_seq = b.max_blocks_per_seq;
  batch.max_context_len = b.host_max_context_len();

  pc_attention_features& features = a.features;
  features.struct_size = sizeof features;
  features.alibi_slopes = needed(ptr.alibi_slopes, !f.alibi_slopes.empty(), fn, "alibi_slopes",
                                 "the problem has ALiBi slopes");
  features.sinks = needed(ptr.sinks, !f.sinks.empty(), fn, "sinks", "the problem has sinks");
  features.window = f.window;
  features.soft_cap = f.soft_cap;
  features.causal = f.causal ? 1 : 0;

  a.out = ptr.out;
  a.out_stride_token = out_layout.stride_token;
  a.out_stride_head = out_layout.stride_head;
  return a;
}

namespace {

/// The fields pc_gather_args and pc_reshape_and_cache_args share (same names in both): sizes,
/// dtype, the cache, its tensors, the slot mapping and the contiguous tensors' strides.
template <typename Args>
Args copy_args(const char* fn, const ref::CacheCopyProblem& p, const CopyPointers& ptr) {
  const ref::PagedCacheLayout& c = p.cache;
  require_tokens(fn, "value_layout", p.value_layout, p.num_tokens(), c.num_kv_heads, c.head_size);
  require_tokens(fn, "key_layout", p.key_layout, p.num_tokens(), c.num_kv_heads, c.head_size);
  Args a{};
  a.struct_size = sizeof a;
  a.dtype = to_abi(p.dtype);
  a.num_tokens = p.num_tokens();
  a.key_cache = ptr.key_cache;
  a.value_cache = value_pointer(c, ptr.key_cache, ptr.value_cache);
  a.cache = to_abi(c, ptr.k_scale, ptr.v_scale);
  a.slot_mapping = ptr.slot_mapping;
  a.key_stride_token = p.key_layout.stride_token;
  a.key_stride_head = p.key_layout.stride_head;
  a.value_stride_token = p.value_layout.stride_token;
  a.value_stride_head = p.value_layout.stride_head;
  return a;
}

}  // namespace

pc_gather_args gather_args(const ref::CacheCopyProblem& p, const CopyPointers& ptr) {
  pc_gather_args g = copy_args<pc_gather_args>("gather_args", p, ptr);
  g.dequantize = p.dequantize ? 1 : 0;
  g.key_out = ptr.key;
  g.value_out = ptr.value;
  return g;
}

pc_reshape_and_cache_args reshape_args(const ref::CacheCopyProblem& p, const CopyPointers& ptr) {
  pc_reshape_and_cache_args r = copy_args<pc_reshape_and_cache_args>("reshape_args", p, ptr);
  r.key = ptr.key;
  r.value = ptr.value;
  return r;
}

}  // namespace pagecheck::verify
