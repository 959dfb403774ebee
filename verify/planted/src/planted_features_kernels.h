#pragma once
/// Host interface of the generic planted kernels of issues 15 and 16 (internal): attention over
/// any layout and feature (one thread per (query row, head), the row of planted_row.h) and
/// copies over any layout with fp8 conversions, each with a bug switch.
#include <cstddef>
#include <cstdint>

#include "pagecheck/plugin.h"
#include "pagecheck/verify/planted_features.h"
#include "pagecheck/verify/planted_row.h"
#include "planted_kernels.h"

namespace pagecheck::verify::planted {

/// What the generic copy kernels read (both directions): the planted copies' params (`dtype` is
/// the token side's here) and the fp8 conversion of the cache.
struct FeatureCopyParams : CopyParams {
  pc_dtype kv_dtype;         ///< cache dtype
  pc_scale_kind scale_kind;  ///< fp8 scales
  const float* k_scale;      ///< fp8 key scales or NULL
  const float* v_scale;      ///< fp8 value scales or NULL
  int32_t dequantize;        ///< gather: non-zero = code * scale into dtype
};

/// Workspace bytes of the generic attention kernel (logits and output scratch per row, head).
size_t feature_attention_workspace(const AttentionParams& p);
/// Enqueues the generic attention kernel; returns the launch error text or "" on success.
const char* launch_feature_attention(const AttentionParams& p, RowBug bug, void* workspace,
                                     void* stream);
/// Enqueues the generic gather (cache -> tokens) or reshape (tokens -> cache) kernel.
const char* launch_feature_gather(const FeatureCopyParams& p, void* stream);
const char* launch_feature_reshape(const FeatureCopyParams& p, CopyBug bug, void* stream);

}  // namespace pagecheck::verify::planted
