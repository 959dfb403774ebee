/// Generator of paged-attention cases (see docs/verify.md for the weights and why).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gen_util.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::gen {
namespace detail {

std::vector<DType> dtypes_for(const VariantCaps& caps, bool large) {
  if (!large) return caps.dtypes;
  std::vector<DType> narrow;
  for (DType d : caps.dtypes) {
    if (d != DType::kFloat32) narrow.push_back(d);
  }
  return narrow.empty() ? caps.dtypes : narrow;
}

int64_t large_pool_blocks(int64_t stride_block, int64_t referenced) {
  return (kLargeCacheElements + stride_block) / stride_block + referenced + 1;
}

}  // namespace detail

namespace {

using detail::draw_between;

enum class HeadShape { kMha, kGqa, kMqa };

/// How one sequence's context length is chosen.
enum class ContextKind {
  kOne,         ///< 1
  kBlock,       ///< exactly one block
  kBlockMinus,  ///< a block - 1
  kBlockPlus,   ///< a block + 1
  kMultiBlock,  ///< k blocks, +-1
  kRandom,      ///< anything up to a few hundred
  kFullTable,   ///< every block-table column (a table at least as wide as a random length)
  kLong,        ///< several split-K partitions, often with a partial last one
};

int64_t draw_context(ContextKind kind, int64_t bs, int size, bool large) {
  switch (kind) {
    case ContextKind::kOne:
      return 1;
    case ContextKind::kBlock:
      return bs;
    case ContextKind::kBlockMinus:
      return std::max<int64_t>(1, bs - 1);
    case ContextKind::kBlockPlus:
      return bs + 1;
    case ContextKind::kMultiBlock:
      return std::max<int64_t>(1, draw_between(2, 2 + size / 10) * bs +
                                      detail::pick<int64_t>({{1, 0}, {1, -1}, {1, 1}}));
    case ContextKind::kRandom:
      return draw_between(1, 2 + size * (large ? 1 : 3));
    case ContextKind::kFullTable:  // at least this long; widened to the table once it is known
      return draw_between(1, 2 + size * (large ? 1 : 3));
    case ContextKind::kLong: {
      const int64_t full = draw_between(1, large ? 2 : 1 + size / 25);
      const std::size_t tail_kind = detail::draw_weighted({1, 1, 1, 3});
      const int64_t tail = tail_kind == 0   ? 0
                           : tail_kind == 1 ? -1
                           : tail_kind == 2 ? 1
                                            : draw_between(2, kPartitionSize - 2);
      return full * kPartitionSize + tail;
    }
  }
  return 1;
}

/// One sequence as drawn: how its context length was chosen, the length, and whether (and how
/// much of) its leading full blocks it shares with an earlier sequence.
struct SeqDraw {
  ContextKind kind = ContextKind::kOne;  ///< how the length was chosen
  int64_t context_len = 1;               ///< the length (kFullTable: its least width)
  bool share = false;                    ///< shares leading blocks with an earlier sequence
  int64_t parent_pick = 0;               ///< that sequence: parent_pick mod this one's index
  int64_t share_pick = 0;                ///< shared blocks: 1 + share_pick * most / 1000
};

/// One sequence's parameters, each shrinking on its own (toward context 1, no sharing).
rc::Gen<SeqDraw> seq_draw(int64_t bs, bool large) {
  return rc::gen::exec([bs, large] {
    const int size = detail::current_size();
    SeqDraw d;
    d.kind = detail::pick<ContextKind>(
        {{4, ContextKind::kOne},
         {3, ContextKind::kBlock},
         {3, ContextKind::kBlockMinus},
         {3, ContextKind::kBlockPlus},
         {3, ContextKind::kMultiBlock},
         {5, ContextKind::kRandom},
         {2, ContextKind::kFullTable},
         {static_cast<std::size_t>(size >= 20 ? 3 : 1), ContextKind::kLong}});
    d.context_len = draw_context(d.kind, bs, size, large);
    d.share = detail::pick<bool>({{3, false}, {1, true}});
    if (d.share) {
      d.parent_pick = draw_between(0, 1 << 20);
      d.share_pick = draw_between(0, 999);
    }
    return d;
  });
}

/// How many sequences a case has: 1 and primes weighted up.
rc::Gen<int64_t> seq_count(bool large) {
  return rc::gen::exec([large] {
    const int64_t seq_cap = large ? 3 : 2 + detail::current_size() / 6;
    const std::size_t seq_kind = detail::draw_weighted({3, 3, 3});
    return seq_kind == 0   ? int64_t{1}
           : seq_kind == 1 ? detail::pick_of(detail::primes_up_to(seq_cap))
                           : draw_between(1, seq_cap);
  });
}

/// Physical block ids for `unique` logical blocks in a pool of `pool` blocks.
std::vector<int64_t> place_blocks(int64_t unique, int64_t pool, bool permute, bool large,
                                  uint64_t seed) {
  std::vector<int64_t> ids(unique);
  if (!large) {
    const std::vector<int64_t> perm =
        permute ? detail::permutation(pool, seed) : std::vector<int64_t>{};
    for (int64_t i = 0; i < unique; ++i) ids[i] = permute ? perm[i] : i;
    return ids;
  }
  // Large pool: referenced blocks at the top (beyond 2^31 elements), some also at the bottom.
  if (!permute) {
    for (int64_t i = 0; i < unique; ++i) ids[i] = pool - unique + i;
    return ids;
  }
  const std::vector<int64_t> perm = detail::permutation(2 * unique, seed);
  bool any_high = false;
  for (int64_t i = 0; i < unique; ++i) {
    const int64_t c = perm[i];
    ids[i] = c < unique ? c : pool - 2 * unique + c;
    any_high = any_high || c >= unique;
  }
  if (!any_high) ids[0] = pool - 1;
  return ids;
}

AttentionSpec draw_attention(const VariantCaps& caps, const GenOptions& options) {
  AttentionSpec s;
  const int size = detail::current_size();
  const bool large = options.large == LargeCache::kAlways && caps.has(PC_CAP_LARGE_CACHE);
  s.dtype = detail::pick_of(detail::dtypes_for(caps, large));
  s.head_size = detail::pick_of(caps.head_sizes);
  s.block_size = detail::pick_of(caps.block_sizes);
  const int64_t bs = s.block_size;

  // Sequences: one container, so a shrink removes any of them and shrinks each on its own.
  const std::vector<SeqDraw> seqs =
      *detail::non_empty_vector(seq_count(large), seq_draw(bs, large));
  s.num_seqs = static_cast<int64_t>(seqs.size());

  // Heads: MHA, GQA, MQA.
  const HeadShape shape =
      detail::pick<HeadShape>({{3, HeadShape::kMha}, {4, HeadShape::kGqa}, {2, HeadShape::kMqa}});
  const int64_t head_cap = large ? 2 : 1 + size / 12;
  if (shape == HeadShape::kMha) {
    s.num_kv_heads = draw_between(1, head_cap);
    s.num_heads = s.num_kv_heads;
  } else if (shape == HeadShape::kGqa) {
    s.num_kv_heads = draw_between(2, 2 + head_cap / 3);
    s.num_heads = s.num_kv_heads * draw_between(2, large ? 3 : 2 + size / 16);
  } else {
    s.num_kv_heads = 1;
    s.num_heads = draw_between(2, large ? 4 : 2 + size / 8);
  }

  // Context lengths.
  s.context_lens.assign(s.num_seqs, 1);
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    s.context_lens[q] = static_cast<int32_t>(seqs[q].context_len);
  }
  int64_t needed = 1;
  for (int32_t len : s.context_lens) needed = std::max<int64_t>(needed, (len + bs - 1) / bs);
  const int64_t extra_cols = detail::pick<int64_t>({{5, 0}, {2, 1}, {1, 2}, {1, 5}});
  s.max_blocks_per_seq = needed + extra_cols;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    if (seqs[q].kind == ContextKind::kFullTable) {
      s.context_lens[q] = static_cast<int32_t>(s.max_blocks_per_seq * bs);
    }
  }

  // Prefix sharing: a sequence's leading full blocks may be an earlier sequence's.
  std::vector<int64_t> share_parent(s.num_seqs, -1), share_count(s.num_seqs, 0);
  for (int64_t q = 1; q < s.num_seqs; ++q) {
    if (!seqs[q].share) continue;
    const int64_t parent = seqs[q].parent_pick % q;
    const int64_t full_q = (s.context_lens[q] - 1) / bs;
    const int64_t full_p = (s.context_lens[parent] - 1) / bs;
    const int64_t most = std::min(full_q, full_p);
    if (most <= 0) continue;
    share_parent[q] = parent;
    share_count[q] = 1 + seqs[q].share_pick * most / 1000;
  }

  // Logical blocks -> unique ids -> physical blocks.
  s.block_table.assign(s.num_seqs * s.max_blocks_per_seq, -1);
  std::vector<int64_t> logical(s.num_seqs * s.max_blocks_per_seq, -1);
  int64_t unique = 0;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t n = used_blocks(s, q);
    for (int64_t b = 0; b < n; ++b) {
      logical[q * s.max_blocks_per_seq + b] =
          b < share_count[q] ? logical[share_parent[q] * s.max_blocks_per_seq + b] : unique++;
    }
  }
  const int64_t unused = detail::draw_weighted({2, 3}) == 0 ? 0 : draw_between(1, 3 + size / 10);
  const bool permute = detail::pick<bool>({{1, false}, {3, true}});
  const uint64_t table_seed = detail::draw_seed();

  // Strides (only where the variant declares it accepts them).
  const int64_t x = dtype_x(s.dtype);
  if (caps.has(PC_CAP_STRIDED_TOKENS) && !large) {
    const std::size_t query_kind = detail::draw_weighted({3, 2, 1});
    if (query_kind == 1) s.query_pad.token = 2 * s.num_kv_heads * s.head_size;  // fused QKV
    if (query_kind == 2) s.query_pad = {x * draw_between(1, 4), x * draw_between(1, 2)};
    if (detail::pick<bool>({{4, false}, {1, true}})) {
      s.out_pad = {x * draw_between(1, 8), x * draw_between(0, 2)};
    }
  }
  if (caps.has(PC_CAP_PADDED_CACHE) && !large && detail::pick<bool>({{3, false}, {1, true}})) {
    s.cache_pad = {x * draw_between(0, 4), x * draw_between(0, 2), x * draw_between(0, 4),
                   x * draw_between(0, 2)};
    if (!s.cache_pad.any()) s.cache_pad.key_block = x;
  }

  const int64_t pool =
      large ? detail::large_pool_blocks(cache_layout(s).key_stride_block, unique) : unique + unused;
  s.num_blocks = pool;
  const std::vector<int64_t> ids = place_blocks(unique, pool, permute, large, table_seed);
  for (std::size_t i = 0; i < logical.size(); ++i) {
    if (logical[i] >= 0) s.block_table[i] = static_cast<int32_t>(ids[logical[i]]);
  }

  // Scale, ALiBi, contents.
  const double inv_sqrt = 1.0 / std::sqrt(static_cast<double>(s.head_size));
  s.scale = static_cast<float>(inv_sqrt * detail::pick<double>({{5, 1.0}, {1, 0.6}}));
  s.alibi = caps.has(PC_CAP_ALIBI) && detail::pick<bool>({{5, false}, {1, true}});
  s.regime = detail::pick<Regime>({{2, Regime::kFlat}, {3, Regime::kPeaked}, {2, Regime::kMixed}});
  s.content_seed = detail::draw_seed();
  return s;
}

}  // namespace

rc::Gen<AttentionSpec> attention_spec(const VariantCaps& caps, const GenOptions& options) {
  caps.validate();
  if (caps.family != PC_FAMILY_PAGED_ATTENTION) {
    throw std::invalid_argument("attention_spec: variant '" + caps.name +
                                "' is not a paged_attention variant");
  }
  return rc::gen::exec([caps, options] { return draw_attention(caps, options); });
}

rc::Gen<CaseSpec> case_spec(const VariantCaps& caps, const GenOptions& options) {
  if (caps.family == PC_FAMILY_PAGED_ATTENTION) {
    return rc::gen::map(attention_spec(caps, options),
                        [](AttentionSpec s) { return CaseSpec(std::move(s)); });
  }
  return rc::gen::map(copy_spec(caps, options), [](CopySpec s) { return CaseSpec(std::move(s)); });
}

}  // namespace pagecheck::verify::gen
