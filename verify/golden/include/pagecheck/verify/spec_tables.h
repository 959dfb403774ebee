#pragma once
/// Hand-written cases as gen specs: the golden catalogue and the GPU tests' fixed cases start
/// from the same plain spec and describe a case by its context lengths (or its token count);
/// these functions turn that into the explicit block table of a gen::AttentionSpec (or a slot
/// list), with portable draws from a seed (std::mt19937_64 and our own mappings), so a case is
/// the same on every platform.
#include <cstdint>
#include <vector>

#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::golden {

/// An attention spec of the given shape with scale 1/sqrt(head_size), a packed x-split cache of
/// `dtype`, no features, the flat regime and content seed `seed`; its batch is left to
/// place_sequences.
gen::AttentionSpec plain_attention_spec(DType dtype, int64_t head_size, int64_t block_size,
                                        int64_t num_heads, int64_t num_kv_heads, uint64_t seed);
/// A copy spec of `family` with a packed x-split cache of `dtype` holding `num_blocks` blocks,
/// packed contiguous key / value, the mixed regime and content seed `seed`; its slot mapping is
/// left to the caller (distinct_slots).
gen::CopySpec plain_copy_spec(pc_family family, DType dtype, int64_t head_size, int64_t block_size,
                              int64_t num_kv_heads, int64_t num_blocks, uint64_t seed);

/// How the sequences of a hand-written attention case sit in the block pool.
struct SequencePlacement {
  std::vector<int32_t> context_lens;  ///< one per sequence, each >= 0
  /// Sequences 1.. reuse sequence 0's first N blocks (where both use the block): prefix
  /// sharing, one physical block read by several sequences.
  int64_t shared_prefix_blocks = 0;
  int64_t extra_columns = 1;  ///< block-table columns past the longest sequence
  int64_t spare_blocks = 2;   ///< pool blocks no sequence references (all poison)
  int64_t min_blocks = 0;     ///< the pool holds at least this many blocks (large caches)
  /// The referenced blocks are the last ones of the pool (past a 2^31-element offset of a
  /// large cache); otherwise they are spread over the whole pool.
  bool high_blocks = false;
  uint64_t seed = 1;  ///< seed of the physical block order
};

/// Sets num_seqs, context_lens, max_blocks_per_seq, num_blocks and block_table of `spec`
/// (block_size must be set): every logical block of every sequence gets a distinct physical
/// block in a random order, except the shared prefix; entries past a sequence's last block are
/// -1. Throws std::invalid_argument naming the field for an empty batch, a negative length or
/// block_size < 1.
void place_sequences(const SequencePlacement& placement, gen::AttentionSpec& spec);

/// `count` distinct slots of [first, first + range), in a random order drawn from `seed`.
/// Throws std::invalid_argument when count exceeds range.
std::vector<int64_t> distinct_slots(int64_t first, int64_t range, int64_t count, uint64_t seed);

}  // namespace pagecheck::verify::golden
