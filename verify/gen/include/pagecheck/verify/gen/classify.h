#pragma once
/// Names of the edge cases a spec hits, for RC_CLASSIFY / RC_TAG and the report's distribution.
#include <string>
#include <vector>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen {

/// Every edge-case tag the spec hits under the variant's caps (the partition sizes of the
/// split-K tags are the variant's: caps.edge_partitions()), e.g. "ctx=1", "ctx=block",
/// "ctx=block-1", "ctx=block+1", "full_table", "multi_partition", "partial_last_partition",
/// "mha", "gqa", "mqa", "seqs=1", "seqs=prime", "shared_blocks", "unused_blocks",
/// "permuted_table", "strided_query", "token_stride", "head_stride", "strided_out",
/// "padded_cache", "pad_shared", "pad_independent", "combined_kv", "cache=nhd", "cache=hnd",
/// "kv=fp8_e4m3", "kv=fp8_e5m2", "scale=per_tensor", "scale=per_kv_head", "scale<1",
/// "scale>1", "scales_apart>=100", "dequantize", "alibi", "large_cache", "slot=-1",
/// "all_skipped", "random_order", "tokens=1", "strided_tokens", "repeated_slot"; features:
/// "q_len>1", "q_len>rest", "q_len=ctx", "non_causal", "sinks", "sinks_far_above",
/// "sinks_far_below", "sinks@one_partition" / "sinks@multi_partition" (sinks, and every row
/// inside the smallest edge partition size or not), "window", "window=1", "window=ctx",
/// "window>ctx", "window_block_edge", "soft_cap", "soft_cap<spread", "ctx=0"; breadth:
/// "split_edge@P" (a context at k*P-1, k*P or k*P+1 for each edge partition size P), "kv_row>512" /
/// "kv_row>1024" (num_kv_heads * head_size / x), "group=npow2", "group>=16", "mqa_heads>=64",
/// "heads>=64", "table_stride>width", "bound>max_ctx", "extreme_logits", "tokens>=1024",
/// "kv_elements>=2^21" (tokens * num_kv_heads * head_size of a copy), "spread_blocks" (8+ tokens,
/// one per block), "whole_block" (every slot of a block); "full_range" (the full-range regime, only
/// under PC_CAP_FULL_RANGE).
std::vector<std::string> edge_tags(const CaseSpec& spec, const VariantCaps& caps);

/// Every tag edge_tags can return for cases drawn under `caps` (for reports listing what was
/// never hit): the family's tags, each feature's only where the caps declare it.
std::vector<std::string> all_edge_tags(const VariantCaps& caps);

}  // namespace pagecheck::verify::gen
