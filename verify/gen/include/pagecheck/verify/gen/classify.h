#pragma once
/// Names of the edge cases a spec hits, for RC_CLASSIFY / RC_TAG and the report's distribution.
#include <string>
#include <vector>

#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen {

/// Every edge-case tag the spec hits, e.g. "ctx=1", "ctx=block", "ctx=block-1",
/// "ctx=block+1", "full_table", "multi_partition", "partial_last_partition", "mha", "gqa",
/// "mqa", "seqs=1", "seqs=prime", "shared_blocks", "unused_blocks", "permuted_table",
/// "strided_query", "strided_out", "padded_cache", "alibi", "large_cache", "slot=-1",
/// "all_skipped", "random_order", "tokens=1", "strided_tokens", "repeated_slot"; breadth:
/// "split_edge@P" (a context at k*P-1, k*P or k*P+1 for P = 256, 512, 1024), "kv_row>512" /
/// "kv_row>1024" (num_kv_heads * head_size / x), "group=npow2", "group>=16", "mqa_heads>=64",
/// "heads>=64", "table_stride>width", "bound>max_ctx", "extreme_logits", "tokens>=1024",
/// "spread_blocks" (8+ tokens, one per block), "whole_block" (every slot of a block).
std::vector<std::string> edge_tags(const CaseSpec& spec);

/// Every tag edge_tags can return for a family (for reports listing what was never hit).
std::vector<std::string> all_edge_tags(pc_family family);

}  // namespace pagecheck::verify::gen
