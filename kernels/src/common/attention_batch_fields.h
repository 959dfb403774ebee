#pragma once
/// The fields every attention kernel's params struct takes from the ragged batch and the
/// features unchanged (AttentionParams, GqaParams, the planted kernels'
/// RowArgs): filled in one place from the version-2
/// arguments.
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// Copies the block table (and its row stride), context lengths, query starts, ALiBi slopes
/// and sinks of `a` into `p`, whose fields of those names have the ABI's types.
template <class Params>
void fill_batch_fields(Params& p, const pc_paged_attention_args& a) {
  p.block_table = a.batch.block_table;
  p.block_table_stride = a.batch.block_table_stride;
  p.context_lens = a.batch.context_lens;
  p.query_start = a.batch.query_start;
  p.alibi_slopes = a.features.alibi_slopes;
  p.sinks = a.features.sinks;
}

}  // namespace pagecheck::kernels
