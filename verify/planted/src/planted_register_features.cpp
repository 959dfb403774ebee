/// Registration of the generic planted variants of issues 15 and 16 (planted_features.h) through
/// the plugin ABI v2: their declaration from the declaration table, can_implement, and the one
/// params of every planted attention kernel from the version-2 arguments (attention_params).
#include <iterator>

#include "common/attention_batch_fields.h"
#include "pagecheck/plugin_read.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"
#include "planted_features_kernels.h"
#include "planted_register_features.h"

namespace pagecheck::verify {
namespace {

using planted::FeatureDecl;

const FeatureDecl& decl_of(const pc_variant* self) {
  return *static_cast<const FeatureDecl*>(self->user_data);
}

bool has_bit(uint32_t mask, int bit) {
  return (mask & (1u << bit)) != 0;
}

bool is_fp8(pc_dtype d) {
  return d == PC_DTYPE_FP8_E4M3 || d == PC_DTYPE_FP8_E5M2;
}

/// The cache checks both families share: the declared KV dtype for token dtype `dtype`, scales
/// exactly with an fp8 cache, positive sizes.
pc_status check_cache(const FeatureDecl& d, const pc_kv_cache& c, pc_dtype dtype, char* msg,
                      size_t len) {
  if (c.struct_size == 0)
    return refuse(msg, len, "args.cache.struct_size is 0", PC_STATUS_INVALID_ARGUMENT);
  if (!has_bit(planted::kTokenDtypes, dtype) && !(is_fp8(dtype) && dtype == c.dtype)) {
    return refuse(msg, len, "dtype is not float32, float16 or bfloat16", PC_STATUS_UNSUPPORTED);
  }
  const bool kv_ok = d.kv_dtype_mask == 0 ? c.dtype == dtype : has_bit(d.kv_dtype_mask, c.dtype);
  if (!kv_ok || (c.dtype != dtype && !is_fp8(c.dtype))) {
    return refuse(msg, len, "cache dtype not declared for this dtype", PC_STATUS_UNSUPPORTED);
  }
  if (is_fp8(c.dtype) && c.dtype != dtype &&
      (c.scale_kind == PC_SCALE_NONE || c.k_scale == nullptr || c.v_scale == nullptr)) {
    return refuse(msg, len, "an fp8 cache needs k_scale and v_scale", PC_STATUS_INVALID_ARGUMENT);
  }
  if (c.num_blocks <= 0 || c.num_kv_heads <= 0 || c.head_size <= 0 || c.block_size <= 0) {
    return refuse(msg, len, "cache sizes must be positive", PC_STATUS_INVALID_ARGUMENT);
  }
  return PC_STATUS_OK;
}

pc_status attention_can_implement(const pc_variant* self, const pc_device_info*, const void* raw,
                                  char* msg, size_t len) {
  pc_paged_attention_args a{};
  if (const pc_status st = read_args(raw, &a, msg, len); st != PC_STATUS_OK) return st;
  if (a.batch.struct_size == 0 || a.features.struct_size == 0) {
    return refuse(msg, len, "args.batch / args.features struct_size is 0",
                  PC_STATUS_INVALID_ARGUMENT);
  }
  if (is_fp8(a.dtype)) return refuse(msg, len, "fp8 query", PC_STATUS_UNSUPPORTED);
  const pc_status st = check_cache(decl_of(self), a.cache, a.dtype, msg, len);
  if (st != PC_STATUS_OK) return st;
  if (a.cache.head_size > planted::kRowMaxHeadSize) {
    return refuse(msg, len, "head size above 512", PC_STATUS_UNSUPPORTED);
  }
  if (a.num_heads <= 0 || a.num_heads % a.cache.num_kv_heads != 0) {
    return refuse(msg, len, "num_heads is not a positive multiple of num_kv_heads",
                  PC_STATUS_INVALID_ARGUMENT);
  }
  if (a.batch.query_start == nullptr && a.batch.num_query_tokens != a.batch.num_seqs) {
    return refuse(msg, len, "num_query_tokens != num_seqs without query_start",
                  PC_STATUS_INVALID_ARGUMENT);
  }
  if (a.batch.num_query_tokens * a.num_heads > (int64_t{1} << 31) * 64) {
    return refuse(msg, len, "too many (row, head) pairs for one grid", PC_STATUS_UNSUPPORTED);
  }
  return PC_STATUS_OK;
}

}  // namespace

namespace planted {

AttentionParams attention_params(const pc_paged_attention_args& raw) {
  const pc_paged_attention_args a = abi::read(raw);
  const pc_kv_cache& c = a.cache;
  AttentionParams p{};
  RowArgs& r = p.row;
  r.dtype = a.dtype;
  r.kv_dtype = c.dtype;
  r.scale_kind = c.scale_kind;
  r.query = a.query;
  r.query_stride_token = a.query_stride_token;
  r.query_stride_head = a.query_stride_head;
  r.key_cache = a.key_cache;
  r.value_cache = a.value_cache;
  set_row_cache(r, c.key, c.value, c.num_blocks, c.num_kv_heads, c.head_size, c.block_size);
  r.num_heads = a.num_heads;
  r.num_seqs = a.batch.num_seqs;
  kernels::fill_batch_fields(r, a);
  r.k_scale = c.k_scale;
  r.v_scale = c.v_scale;
  r.window = a.features.window;
  r.soft_cap = a.features.soft_cap;
  r.causal = a.features.causal;
  r.scale = a.scale;
  p.num_rows = a.batch.num_query_tokens;
  p.max_context_len = a.batch.max_context_len;
  p.max_blocks_per_seq = a.batch.max_blocks_per_seq;
  p.out = a.out;
  p.out_stride_token = a.out_stride_token;
  p.out_stride_head = a.out_stride_head;
  return p;
}

}  // namespace planted

namespace {

size_t attention_workspace(const pc_variant*, const pc_device_info*, const void* args) {
  return planted::feature_attention_workspace(
      planted::attention_params(*static_cast<const pc_paged_attention_args*>(args)));
}

pc_status attention_launch(const pc_variant* self, const pc_device_info*, const void* args,
                           void* workspace, void* stream, char* msg, size_t len) {
  const char* err = planted::launch_feature_attention(
      planted::attention_params(*static_cast<const pc_paged_attention_args*>(args)),
      decl_of(self).row_bug, workspace, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

/// The generic copy kernels' params: the planted copies' `base` and the fp8 conversion of `c`.
planted::FeatureCopyParams copy_params(const planted::CopyParams& base, const pc_kv_cache& c) {
  planted::FeatureCopyParams p{};
  static_cast<planted::CopyParams&>(p) = base;
  p.kv_dtype = c.dtype;
  p.scale_kind = c.scale_kind;
  p.k_scale = c.k_scale;
  p.v_scale = c.v_scale;
  return p;
}

pc_status gather_can_implement(const pc_variant* self, const pc_device_info*, const void* raw,
                               char* msg, size_t len) {
  pc_gather_args a{};
  if (const pc_status st = read_args(raw, &a, msg, len); st != PC_STATUS_OK) return st;
  const pc_status st = check_cache(decl_of(self), a.cache, a.dtype, msg, len);
  if (st != PC_STATUS_OK) return st;
  if (a.dtype != a.cache.dtype && a.dequantize == 0) {
    return refuse(msg, len, "a raw gather needs dtype == cache dtype", PC_STATUS_INVALID_ARGUMENT);
  }
  if (a.num_tokens > 0x7fffffff) return refuse(msg, len, "too many tokens", PC_STATUS_UNSUPPORTED);
  return PC_STATUS_OK;
}

pc_status gather_launch(const pc_variant*, const pc_device_info*, const void* raw, void*,
                        void* stream, char* msg, size_t len) {
  const auto& args = *static_cast<const pc_gather_args*>(raw);
  const pc_gather_args a = abi::read(args);
  planted::FeatureCopyParams p = copy_params(planted::gather_params(args), a.cache);
  p.dequantize = a.dequantize;
  const char* err = planted::launch_feature_gather(p, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

pc_status reshape_can_implement(const pc_variant* self, const pc_device_info*, const void* raw,
                                char* msg, size_t len) {
  pc_reshape_and_cache_args a{};
  if (const pc_status st = read_args(raw, &a, msg, len); st != PC_STATUS_OK) return st;
  const pc_status st = check_cache(decl_of(self), a.cache, a.dtype, msg, len);
  if (st != PC_STATUS_OK) return st;
  if (a.num_tokens > 0x7fffffff) return refuse(msg, len, "too many tokens", PC_STATUS_UNSUPPORTED);
  return PC_STATUS_OK;
}

pc_status reshape_launch(const pc_variant* self, const pc_device_info*, const void* raw, void*,
                         void* stream, char* msg, size_t len) {
  const auto& args = *static_cast<const pc_reshape_and_cache_args*>(raw);
  const planted::FeatureCopyParams p =
      copy_params(planted::reshape_params(args), abi::read(args).cache);
  const char* err = planted::launch_feature_reshape(p, decl_of(self).copy_bug, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

}  // namespace

bool register_feature_variant(VariantRegistry& registry, const PlantedVariant& p) {
  const FeatureDecl* d = planted::find_feature_decl(p.name.c_str());
  if (d == nullptr) return false;
  const PlantedDeclaration decl{
      d->family,
      d->kv_dtype_mask,
      d->cache_kind_mask,
      d->scale_kind_mask,
      d->wide_sizes ? sizes_of(planted::kControlHeadSizes) : sizes_of(planted::kBugHeadSizes),
      d->wide_sizes ? sizes_of(planted::kControlBlockSizes) : sizes_of(planted::kBugBlockSizes),
      {},
      d->caps,
      d->max_query_len,
      d->context0};
  add_planted(registry, p, decl, d,
              {attention_can_implement, attention_workspace, attention_launch},
              {gather_can_implement, nullptr, gather_launch},
              {reshape_can_implement, nullptr, reshape_launch});
  return true;
}

}  // namespace pagecheck::verify
