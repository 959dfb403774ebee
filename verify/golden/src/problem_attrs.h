#pragma once
/// The HDF5 form of the problem vocabulary (reference/problems.h): one writer and one reader
/// per concept, used by attention and copy goldens alike. Each concept owns its root
/// attributes (scalars) and its datasets (arrays); docs/fixtures.md lists them.
///   cache descriptor  cache_*                      + inputs/k_scale, inputs/v_scale (fp8)
///   ragged batch      batch_*                      + inputs/context_lens, inputs/block_table,
///                                                    inputs/query_start (multi-token)
///   features          feature_*                    + inputs/alibi_slopes, inputs/sinks
///   attention problem family, dtype, num_heads, scale, query_stride_* + inputs/query and the
///                     cache tensors, plus the three concepts above
///   copy problem      family, dtype, num_tokens, dequantize, key_stride_*, value_stride_*
///                     + inputs/key, inputs/value, inputs/slot_mapping, the cache tensors, and
///                     the cache descriptor
/// Readers validate what they read (GoldenError naming the file and the attribute or dataset)
/// and mark the datasets they read, so that the caller can refuse any other.
#include <stdexcept>
#include <string>
#include <vector>

#include "golden_schema.h"
#include "pagecheck/plugin.h"
#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::golden {

/// The cache descriptor and its fp8 scales as a golden holds them.
struct CacheForm {
  ref::PagedCacheLayout layout;  ///< kind, dtype, scale kind, sizes, strides, combined
  std::vector<float> k_scale;    ///< 1 or num_kv_heads scales (empty for ScaleKind::kNone)
  std::vector<float> v_scale;    ///< as k_scale, for V
};

/// Writes the cache_* attributes of `cache` and, for a scale kind other than none, the
/// datasets inputs/k_scale and inputs/v_scale.
void write_cache(const CacheForm& cache, GoldenFile& file);
/// Reads them back; the layout is validated.
CacheForm read_cache(GoldenReader& reader);
/// The cache tensors of `cache` in group `group` ("inputs" or "expected"): `group`/key_cache
/// and `group`/value_cache in the cache dtype, logical shape [blocks, kv_heads, head_size /
/// dim_split, block_size, dim_split] for a split head dimension (x-split keys), else [blocks,
/// kv_heads, block_size, head_size], with the descriptor's strides. A combined cache is one
/// dataset, key_cache, holding both tensors (key_span elements) with the value view in its
/// attributes value_logical_shape, value_strides and value_offset.
std::vector<DatasetSpec> cache_tensor_specs(const std::string& group,
                                            const ref::PagedCacheLayout& cache);

/// Writes the batch_* attributes and the datasets inputs/context_lens, inputs/block_table (the
/// dense table) and, for a multi-token batch, inputs/query_start.
void write_batch(const ref::RaggedBatch& batch, GoldenFile& file);
/// Reads them back (shapes checked; consistency is the problem's validate()).
ref::RaggedBatch read_batch(GoldenReader& reader);

/// Writes the feature_* attributes and the datasets inputs/alibi_slopes and inputs/sinks (when
/// present; [num_heads] float32).
void write_features(const ref::AttentionFeatures& features, int64_t num_heads, GoldenFile& file);
/// Reads them back for a problem of `num_heads` query heads.
ref::AttentionFeatures read_features(GoldenReader& reader, int64_t num_heads);

/// Writes every input of an attention problem (family, dtype, heads, scale, query, cache,
/// batch, features).
void write_attention_problem(const ref::PagedAttentionProblem& problem, GoldenFile& file);
/// Reads them back; the problem is validated (ref validate(): GoldenError "inputs").
ref::PagedAttentionProblem read_attention_problem(GoldenReader& reader);

/// Writes every input of a copy problem of `family` (gather: key / value are the outputs'
/// contents before the call).
void write_copy_problem(pc_family family, const ref::CacheCopyProblem& problem, GoldenFile& file);
/// Reads them back; validated like read_attention_problem.
ref::CacheCopyProblem read_copy_problem(GoldenReader& reader);

/// `problem` (read from `reader`'s file) after its validate(); a GoldenError naming the file and
/// "inputs" when the datasets and attributes describe an inconsistent problem.
template <typename Problem>
Problem validated(Problem problem, const GoldenReader& reader) {
  try {
    problem.validate();
  } catch (const std::invalid_argument& e) {
    throw GoldenError(reader.path(), "inputs", std::string("inconsistent problem: ") + e.what());
  }
  return problem;
}

}  // namespace pagecheck::verify::golden
