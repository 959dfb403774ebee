/// The catalogue of planted variants (names, families, what is broken).
#include "pagecheck/verify/planted.h"
#include "pagecheck/verify/planted_features.h"

namespace pagecheck::verify {

const std::vector<PlantedVariant>& planted_catalogue() {
  static const std::vector<PlantedVariant> catalogue = [] {
    std::vector<PlantedVariant> all = {
        {"planted_control_v1", PC_FAMILY_PAGED_ATTENTION, true,
         "correct one-pass kernel (64-bit offsets, large caches)"},
        {"planted_control_v2", PC_FAMILY_PAGED_ATTENTION, true,
         "correct split-K kernel (partitions of 256 tokens + merge)"},
        {"planted_skip_last_partial_block", PC_FAMILY_PAGED_ATTENTION, false,
         "the tokens of a partially filled last block are skipped"},
        {"planted_context_off_by_one", PC_FAMILY_PAGED_ATTENTION, false,
         "attends to context_len - 1 tokens"},
        {"planted_wrong_kv_head_gqa", PC_FAMILY_PAGED_ATTENTION, false,
         "query head h reads kv head h % num_kv_heads instead of h / group (differs under GQA)"},
        {"planted_other_seq_block_table_row", PC_FAMILY_PAGED_ATTENTION, false,
         "block-table rows addressed with ceil(max_context_len / block_size) instead of the row "
         "stride: another sequence's row when the table has spare columns"},
        {"planted_scale_twice", PC_FAMILY_PAGED_ATTENTION, false, "logits scaled by scale^2"},
        {"planted_scale_missing", PC_FAMILY_PAGED_ATTENTION, false, "logits not scaled"},
        {"planted_partition_max_only", PC_FAMILY_PAGED_ATTENTION, false,
         "split-K merge weights partitions by their sums only, ignoring their different maxima"},
        {"planted_zero_weight_nan", PC_FAMILY_PAGED_ATTENTION, false,
         "value loop runs over whole blocks with weight 0 past the context (0 x NaN)"},
        {"planted_offset_32bit", PC_FAMILY_PAGED_ATTENTION, false,
         "cache offsets computed in 32 bits (wrong beyond 2^31 elements)"},
        {"planted_missing_syncthreads", PC_FAMILY_PAGED_ATTENTION, false,
         "the shared query is read before the (late) loading warp wrote it: no __syncthreads()"},
        {"planted_race_atomic_values", PC_FAMILY_PAGED_ATTENTION, false,
         "race: weighted values summed with shared-memory atomicAdd in the warps' order, right up "
         "to rounding but different in the last bits from run to run"},
        {"planted_table_stride_from_width", PC_FAMILY_PAGED_ATTENTION, false,
         "block-table rows addressed with max_blocks_per_seq instead of block_table_stride: a "
         "padded table (stride > width) gives sequence 1 row 0's padding (a poisoned block); "
         "shrinks to 2 sequences"},
        {"planted_finite_mask_sentinel", PC_FAMILY_PAGED_ATTENTION, false,
         "softmax over whole blocks with the slots past the context masked by the finite logit "
         "-1e4 (values 0): with every logit below -1e4 (extreme regime) the masked slots take "
         "the weight; one sequence with a partial last block suffices"},
        {"planted_partitions_from_bound", PC_FAMILY_PAGED_ATTENTION, false,
         "partition count of the split-K kernel (partitions of 256) taken from the host bound "
         "max_context_len for every sequence: a sequence with fewer partitions than the bound "
         "merges empty ones (0 / 0 = NaN); needs 2 sequences (one short, one over 256 tokens) or "
         "1 sequence whose bucketed bound crosses a partition edge"},
        {"planted_gqa_group_le8", PC_FAMILY_PAGED_ATTENTION, false,
         "GQA right only for groups of at most 8: a kv head serves 8 query-head slots, so in "
         "groups of 16 / 32 (or MQA with more than 8 heads) the heads past the 8th of each group "
         "are never written"},
        {"planted_control_gather", PC_FAMILY_GATHER_CACHED_KV, true, "correct gather"},
        {"planted_gather_reads_slot_minus1", PC_FAMILY_GATHER_CACHED_KV, false,
         "slot -1 is not skipped: reads block 0, offset -1"},
        {"planted_gather_x_split_offset", PC_FAMILY_GATHER_CACHED_KV, false,
         "keys addressed as [head_size, block_size] (value layout) instead of the x-split layout"},
        {"planted_gather_one_block_per_token", PC_FAMILY_GATHER_CACHED_KV, false,
         "a token's num_kv_heads * head_size / x 16-byte vectors go to the at most 1024 threads "
         "of one block with no loop: the vectors past 1024 are never copied (kv_row>1024)"},
        {"planted_control_reshape", PC_FAMILY_RESHAPE_AND_CACHE, true, "correct reshape_and_cache"},
        {"planted_reshape_writes_slot_minus1", PC_FAMILY_RESHAPE_AND_CACHE, false,
         "slot -1 is not skipped: writes block 0, offset -1"},
        {"planted_reshape_one_block_per_token", PC_FAMILY_RESHAPE_AND_CACHE, false,
         "a token's num_kv_heads * head_size / x 16-byte vectors go to the at most 1024 threads "
         "of one block with no loop: the vectors past 1024 are never written (kv_row>1024)"},
    };
    // The generic variants of issues 15 and 16, from their declaration table.
    for (const planted::FeatureDecl& d : planted::kFeatureDecls) {
      all.push_back({d.name, d.family,
                     d.row_bug == planted::RowBug::kNone && d.copy_bug == planted::CopyBug::kNone,
                     d.description});
    }
    return all;
  }();
  return catalogue;
}

}  // namespace pagecheck::verify
