/// Block tables and slot mappings of hand-written cases (spec_tables.h).
#include "pagecheck/verify/spec_tables.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "case_random.h"

namespace pagecheck::verify::golden {

namespace {

/// What plain attention and copy specs share: the case's dtype and sizes, its content seed and
/// an x-split cache in the case's dtype.
template <typename Spec>
Spec plain_spec(DType dtype, int64_t head_size, int64_t block_size, int64_t num_kv_heads,
                uint64_t seed) {
  Spec s;
  s.dtype = dtype;
  s.head_size = head_size;
  s.block_size = block_size;
  s.num_kv_heads = num_kv_heads;
  s.cache.kind = ref::CacheKind::kXSplit;
  s.cache.kv_dtype = dtype;
  s.content_seed = seed;
  return s;
}

}  // namespace

gen::AttentionSpec plain_attention_spec(DType dtype, int64_t head_size, int64_t block_size,
                                        int64_t num_heads, int64_t num_kv_heads, uint64_t seed) {
  auto s = plain_spec<gen::AttentionSpec>(dtype, head_size, block_size, num_kv_heads, seed);
  s.num_heads = num_heads;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_size)));
  s.regime = gen::Regime::kFlat;
  return s;
}

gen::CopySpec plain_copy_spec(pc_family family, DType dtype, int64_t head_size, int64_t block_size,
                              int64_t num_kv_heads, int64_t num_blocks, uint64_t seed) {
  auto s = plain_spec<gen::CopySpec>(dtype, head_size, block_size, num_kv_heads, seed);
  s.family = family;
  s.num_blocks = num_blocks;
  s.regime = gen::Regime::kMixed;
  return s;
}

void place_sequences(const SequencePlacement& placement, gen::AttentionSpec& spec) {
  const std::vector<int32_t>& lens = placement.context_lens;
  const int64_t bs = spec.block_size;
  if (lens.empty()) throw std::invalid_argument("place_sequences: context_lens is empty");
  if (bs < 1) throw std::invalid_argument("place_sequences: block_size must be positive");
  const auto num_seqs = static_cast<int64_t>(lens.size());
  std::vector<int64_t> used(lens.size());
  for (std::size_t s = 0; s < lens.size(); ++s) {
    if (lens[s] < 0) {
      throw std::invalid_argument("place_sequences: context_lens[" + std::to_string(s) +
                                  "] is negative");
    }
    used[s] = (lens[s] + bs - 1) / bs;
  }
  const auto shared = [&](int64_t s, int64_t j) {
    return s > 0 && j < placement.shared_prefix_blocks && j < used[0];
  };
  int64_t needed = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    for (int64_t j = 0; j < used[s]; ++j) needed += shared(s, j) ? 0 : 1;
  }
  const int64_t pool = std::max(needed + placement.spare_blocks, placement.min_blocks);
  const int64_t first = placement.high_blocks ? pool - needed : 0;
  const int64_t range = placement.high_blocks ? needed : pool;
  CaseRng rng(placement.seed);
  const std::vector<int64_t> order = rng.sample(range, needed);

  spec.num_seqs = num_seqs;
  spec.context_lens = lens;
  spec.num_blocks = pool;
  spec.max_blocks_per_seq = *std::max_element(used.begin(), used.end()) + placement.extra_columns;
  spec.block_table.assign(static_cast<std::size_t>(num_seqs * spec.max_blocks_per_seq), -1);
  std::size_t next = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    for (int64_t j = 0; j < used[s]; ++j) {
      spec.block_table[s * spec.max_blocks_per_seq + j] =
          shared(s, j) ? spec.block_table[j] : static_cast<int32_t>(first + order[next++]);
    }
  }
}

std::vector<int64_t> distinct_slots(int64_t first, int64_t range, int64_t count, uint64_t seed) {
  if (count < 0 || count > range) {
    throw std::invalid_argument("distinct_slots: " + std::to_string(count) +
                                " distinct slots out of " + std::to_string(range));
  }
  CaseRng rng(seed);
  std::vector<int64_t> slots = rng.sample(range, count);
  for (int64_t& slot : slots) slot += first;
  return slots;
}

}  // namespace pagecheck::verify::golden
