/// Generator of paged-attention cases (see docs/verify.md for the weights and why).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attention_draws.h"
#include "cache_draw.h"
#include "feature_draws.h"
#include "fp8_scales.h"
#include "gen_util.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::gen {
namespace detail {

std::vector<DType> kv_options(const VariantCaps& caps, DType dtype) {
  std::vector<DType> out;
  for (DType kv : caps.kv_dtypes_for(dtype)) {
    const bool converts = kv != dtype;
    if (converts && dtype_info(dtype).fp8) continue;  // fp8 tokens: raw codes of their own dtype
    if (converts && caps.family == PC_FAMILY_GATHER_CACHED_KV && !caps.has(PC_CAP_DEQUANTIZE)) {
      continue;  // a gather without dequantization copies codes: tokens of the cache dtype
    }
    out.push_back(kv);
  }
  return out;
}

std::vector<DType> dtypes_for(const VariantCaps& caps, bool large) {
  std::vector<DType> usable;
  for (DType d : caps.dtypes) {
    const bool token = caps.family != PC_FAMILY_PAGED_ATTENTION || dtype_info(d).query_dtype;
    if (token && !kv_options(caps, d).empty()) usable.push_back(d);
  }
  if (usable.empty()) {
    throw std::invalid_argument("variant '" + caps.name +
                                "' declares no token dtype the generators can pair with a cache "
                                "dtype");
  }
  if (!large) return usable;
  std::vector<DType> narrow;
  for (DType d : usable) {
    if (d != DType::kFloat32) narrow.push_back(d);
  }
  return narrow.empty() ? usable : narrow;
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

/// The head size of a grid case: one of the declared sizes up to 64 (else the smallest), so
/// that its many long rows keep the CPU reference short.
int64_t grid_head_size(const std::vector<int64_t>& declared) {
  std::vector<int64_t> small;
  for (int64_t h : declared) {
    if (h <= 64) small.push_back(h);
  }
  return small.empty() ? *std::min_element(declared.begin(), declared.end())
                       : detail::pick_of(small);
}

/// The dtype a wide case uses: float32 half the time (when usable; its 4-element vectors
/// double the 16-byte vectors per token), else any usable one.
DType wide_dtype(const std::vector<DType>& usable) {
  if (detail::contains(usable, DType::kFloat32) && detail::pick<bool>({{1, false}, {1, true}})) {
    return DType::kFloat32;
  }
  return detail::pick_of(usable);
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

/// The attention features the variant declares, each in about a quarter of the cases.
void draw_features(const VariantCaps& caps, AttentionSpec& s) {
  const auto sometimes = [] { return detail::pick<bool>({{3, false}, {1, true}}); };
  const bool multi =
      std::any_of(s.query_lens.begin(), s.query_lens.end(), [](int32_t n) { return n > 1; });
  if (caps.has(PC_CAP_NON_CAUSAL) && multi) {
    s.causal = detail::pick<bool>({{2, true}, {1, false}});
  }
  if (caps.has(PC_CAP_SINKS) && sometimes()) s.sinks = detail::draw_sinks(s.num_heads, s.regime);
  if (caps.has(PC_CAP_WINDOW) && sometimes()) s.window = detail::draw_window(s);
  if (caps.has(PC_CAP_SOFT_CAP) && sometimes()) s.soft_cap = detail::draw_soft_cap(s.regime);
}

AttentionSpec draw_attention(const VariantCaps& caps, const GenOptions& options) {
  AttentionSpec s;
  const int size = detail::current_size();
  const bool large = options.large == LargeCache::kAlways && caps.has(PC_CAP_LARGE_CACHE);
  // A wide case: the head counts of served models, few tokens (the CPU reference stays fast).
  const bool wide = !large && detail::pick<bool>({{4, false}, {1, true}});
  // A grid case (about one case in 60): enough sequences and kv heads to fill a GPU with one
  // block per (sequence, kv head), rows of 512-768 tokens, small heads, decode: where
  // size-driven launch rules flip. Rare and bounded: the CPU reference of each is the cost.
  const bool grid = !large && !wide && detail::pick<bool>({{47, false}, {1, true}});
  const std::vector<DType> dtypes = detail::dtypes_for(caps, large);
  s.dtype = wide ? wide_dtype(dtypes) : detail::pick_of(dtypes);
  s.head_size = wide && detail::pick<bool>({{1, false}, {1, true}})
                    ? *std::max_element(caps.head_sizes.begin(), caps.head_sizes.end())
                : grid ? grid_head_size(caps.head_sizes)
                       : detail::pick_of(caps.head_sizes);
  s.block_size = detail::pick_of(caps.block_sizes);
  const int64_t bs = s.block_size;
  detail::SeqLimits limits;
  limits.block_size = bs;
  limits.budget = large  ? ContextBudget::kLarge
                  : wide ? ContextBudget::kTiny
                  : grid ? ContextBudget::kGrid
                         : ContextBudget::kOrdinary;
  limits.partitions = caps.edge_partitions();
  limits.max_query_len = large || grid ? 1 : caps.max_query_len;  // grid: decode (CPU budget)
  limits.context0 = !large && caps.context0 != PC_CONTEXT0_UNSUPPORTED;

  // Sequences: one container, so a shrink removes any of them and shrinks each on its own. A
  // grid case draws its heads first: its sequence count follows from the kv heads.
  const detail::HeadDraw grid_heads = grid ? detail::draw_grid_heads() : detail::HeadDraw{};
  const std::vector<SeqDraw> seqs = *detail::non_empty_vector(
      grid ? detail::grid_seq_count(grid_heads.num_kv_heads) : detail::seq_count(limits.budget),
      detail::seq_draw(limits));
  s.num_seqs = static_cast<int64_t>(seqs.size());

  const detail::HeadDraw heads = grid   ? grid_heads
                                 : wide ? detail::draw_wide_heads()
                                        : detail::draw_ordinary_heads(size, large);
  s.num_heads = heads.num_heads;
  s.num_kv_heads = heads.num_kv_heads;

  // Context lengths, then query lengths (the query's tokens are the context's last ones).
  s.context_lens.assign(s.num_seqs, 1);
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    s.context_lens[q] = static_cast<int32_t>(seqs[q].context_len);
  }
  int64_t needed = 1;
  for (int32_t len : s.context_lens) needed = std::max<int64_t>(needed, detail::ceil_div(len, bs));
  const int64_t extra_cols = detail::pick<int64_t>({{5, 0}, {2, 1}, {1, 2}, {1, 5}});
  s.max_blocks_per_seq = needed + extra_cols;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    if (seqs[q].kind == ContextKind::kFullTable) {
      s.context_lens[q] = static_cast<int32_t>(s.max_blocks_per_seq * bs);
    }
  }
  if (limits.max_query_len > 1) {
    const int64_t cap = detail::query_cap(limits.max_query_len);
    s.query_lens.resize(s.num_seqs);
    for (int64_t q = 0; q < s.num_seqs; ++q) {
      s.query_lens[q] = static_cast<int32_t>(detail::query_length(seqs[q], s.context_lens[q], cap));
    }
    if (std::all_of(s.query_lens.begin(), s.query_lens.end(), [](int32_t n) { return n == 1; })) {
      s.query_lens.clear();  // plain decode
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
    const int64_t most =
        std::min<int64_t>((s.context_lens[q] - 1) / bs, (s.context_lens[parent] - 1) / bs);
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
      std::max<int64_t>(s.table_pad > 0 || unique == 0 ? 1 : 0,
                        detail::draw_weighted({2, 3}) == 0 ? 0 : draw_between(1, 3 + size / 10));
  const bool permute = detail::pick<bool>({{1, false}, {3, true}});
  const uint64_t table_seed = detail::draw_seed();

  // Cache and strides (only what the variant declares it accepts).
  detail::CacheDraw cache =
      detail::draw_cache(caps, s.dtype, detail::kv_options(caps, s.dtype), s.num_kv_heads, large);
  s.cache = cache.cache;
  if (!large) detail::draw_token_strides(caps, s);

  const int64_t pool =
      large ? detail::large_pool_blocks(cache_layout(s).key.block, unique) : unique + unused;
  s.num_blocks = pool;
  const std::vector<int64_t> ids = place_blocks(unique, pool, permute, large, table_seed);
  for (std::size_t i = 0; i < logical.size(); ++i) {
    if (logical[i] >= 0) s.block_table[i] = static_cast<int32_t>(ids[logical[i]]);
  }

  // Scale, ALiBi, contents, features.
  const double inv_sqrt = 1.0 / std::sqrt(static_cast<double>(s.head_size));
  s.scale = static_cast<float>(inv_sqrt * detail::pick<double>({{5, 1.0}, {1, 0.6}}));
  s.alibi = caps.has(PC_CAP_ALIBI) && detail::pick<bool>({{5, false}, {1, true}});
  // Full-range values only where declared (weight 0 otherwise: the same draws as before).
  const std::size_t full_range = caps.has(PC_CAP_FULL_RANGE) ? 1 : 0;
  s.regime = detail::pick<Regime>({{2, Regime::kFlat},
                                   {3, Regime::kPeaked},
                                   {2, Regime::kMixed},
                                   {1, Regime::kExtreme},
                                   {full_range, Regime::kFullRange}});
  if (s.regime == Regime::kExtreme) s.extreme_partition = detail::pick_of(limits.partitions);
  if (!large) draw_features(caps, s);
  detail::finish_scales(
      cache, detail::nominal_scale(detail::attention_magnitude(s, true), s.cache.kv_dtype),
      detail::nominal_scale(detail::attention_magnitude(s, false), s.cache.kv_dtype));
  s.cache.k_scale = cache.cache.k_scale;
  s.cache.v_scale = cache.cache.v_scale;
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
  detail::dtypes_for(caps, false);  // throws now, not inside the generator
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
