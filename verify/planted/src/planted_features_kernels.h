#pragma once
/// Host interface of the generic planted kernels of issues 15 and 16 (internal): attention over
/// any layout and feature (one thread per (query row, head), the row of planted_row.h) and
/// copies over any layout with fp8 conversions, each with a bug switch.
#include <cstddef>
#include <cstdint>

#include "pagecheck/plugin.h"
#include "pagecheck/verify/planted_features.h"
#include "pagecheck/verify/planted_row.h"

namespace pagecheck::verify::planted {

/// What the generic attention kernel reads besides the row's arguments.
struct FeatureAttentionParams {
  RowArgs row;               ///< the row's arguments
  int64_t num_rows;          ///< query rows of the batch
  int64_t max_context_len;   ///< host bound on every context (logits scratch per row and head)
  void* out;                 ///< [num_rows, num_heads, head_size] in row.dtype
  int64_t out_stride_token;  ///< elements between output rows
  int64_t out_stride_head;   ///< elements between output heads
};

/// What the generic copy kernels read (both directions).
struct FeatureCopyParams {
  pc_dtype dtype;                  ///< token-side dtype
  pc_dtype kv_dtype;               ///< cache dtype
  pc_scale_kind scale_kind;        ///< fp8 scales
  const float* k_scale;            ///< fp8 key scales or NULL
  const float* v_scale;            ///< fp8 value scales or NULL
  int32_t dequantize;              ///< gather: non-zero = code * scale into dtype
  int64_t num_tokens;              ///< rows of the token tensors
  void* key_cache;                 ///< key tensor
  void* value_cache;               ///< value tensor (value_base applied when combined)
  pc_cache_strides key_strides;    ///< key cache strides
  pc_cache_strides value_strides;  ///< value cache strides
  int64_t num_kv_heads;            ///< heads per token
  int64_t head_size;               ///< elements per head
  int64_t block_size;              ///< slots per block
  const int64_t* slot_mapping;     ///< [num_tokens], -1 = skip
  void* key;                       ///< token-side K
  int64_t key_stride_token;        ///< elements between key rows
  int64_t key_stride_head;         ///< elements between key heads
  void* value;                     ///< token-side V
  int64_t value_stride_token;      ///< elements between value rows
  int64_t value_stride_head;       ///< elements between value heads
};

/// Workspace bytes of the generic attention kernel (logits and output scratch per row, head).
size_t feature_attention_workspace(const FeatureAttentionParams& p);
/// Enqueues the generic attention kernel; returns the launch error text or "" on success.
const char* launch_feature_attention(const FeatureAttentionParams& p, RowBug bug, void* workspace,
                                     void* stream);
/// Enqueues the generic gather (cache -> tokens) or reshape (tokens -> cache) kernel.
const char* launch_feature_gather(const FeatureCopyParams& p, void* stream);
const char* launch_feature_reshape(const FeatureCopyParams& p, CopyBug bug, void* stream);

}  // namespace pagecheck::verify::planted
