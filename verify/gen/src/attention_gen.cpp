/// Generator of paged-attention cases (see docs/verify.md for the weights and why).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attention_draws.h"
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

using detail::ContextBudget;
using detail::ContextKind;
using detail::draw_between;
using detail::SeqDraw;

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

/// The dtype a wide case uses: float32 half the time (when declared; its 4-element vectors
/// double the 16-byte vectors per token), else any declared one.
DType wide_dtype(const VariantCaps& caps) {
  const bool f32 =
      std::find(caps.dtypes.begin(), caps.dtypes.end(), DType::kFloat32) != caps.dtypes.end();
  if (f32 && detail::pick<bool>({{1, false}, {1, true}})) return DType::kFloat32;
  return detail::pick_of(caps.dtypes);
}

/// The host-side bound: exact, the next power of two, or a few blocks more (engines bucket
/// it); clamped to the table's capacity.
int64_t draw_bound_pad(const AttentionSpec& s) {
  const std::size_t kind = detail::draw_weighted({4, 1, 1});
  if (kind == 0) return 0;
  const int64_t largest = largest_context(s);
  int64_t bound = largest + draw_between(1, 2 * s.block_size);
  if (kind == 1) {
    bound = 1;
    while (bound <= largest) bound *= 2;
  }
  return std::min(bound, s.max_blocks_per_seq * s.block_size) - largest;
}

AttentionSpec draw_attention(const VariantCaps& caps, const GenOptions& options) {
  AttentionSpec s;
  const int size = detail::current_size();
  const bool large = options.large == LargeCache::kAlways && caps.has(PC_CAP_LARGE_CACHE);
  // A wide case: the head counts of served models, few tokens (the CPU reference stays fast).
  const bool wide = !large && detail::pick<bool>({{4, false}, {1, true}});
  s.dtype = wide ? wide_dtype(caps) : detail::pick_of(detail::dtypes_for(caps, large));
  s.head_size = wide && detail::pick<bool>({{1, false}, {1, true}})
                    ? *std::max_element(caps.head_sizes.begin(), caps.head_sizes.end())
                    : detail::pick_of(caps.head_sizes);
  s.block_size = detail::pick_of(caps.block_sizes);
  const int64_t bs = s.block_size;
  const ContextBudget budget = large  ? ContextBudget::kLarge
                               : wide ? ContextBudget::kTiny
                                      : ContextBudget::kOrdinary;

  // Sequences: one container, so a shrink removes any of them and shrinks each on its own.
  const std::vector<SeqDraw> seqs =
      *detail::non_empty_vector(detail::seq_count(budget), detail::seq_draw(bs, budget));
  s.num_seqs = static_cast<int64_t>(seqs.size());

  const detail::HeadDraw heads =
      wide ? detail::draw_wide_heads() : detail::draw_ordinary_heads(size, large);
  s.num_heads = heads.num_heads;
  s.num_kv_heads = heads.num_kv_heads;

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
  // Padded table rows (a row stride above the width) and a host bound above the largest
  // context; the padding points at an unread, poisoned block, so the pool keeps one.
  if (!large) {
    const std::size_t pad_kind = detail::draw_weighted({6, 1, 1});
    s.table_pad = pad_kind == 0 ? 0 : pad_kind == 1 ? draw_between(1, 3) : s.max_blocks_per_seq;
    s.bound_pad = draw_bound_pad(s);
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
  const int64_t unused =
      std::max<int64_t>(s.table_pad > 0 ? 1 : 0,
                        detail::draw_weighted({2, 3}) == 0 ? 0 : draw_between(1, 3 + size / 10));
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
  s.regime = detail::pick<Regime>(
      {{2, Regime::kFlat}, {3, Regime::kPeaked}, {2, Regime::kMixed}, {1, Regime::kExtreme}});
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
