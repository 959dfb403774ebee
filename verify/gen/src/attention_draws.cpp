/// Sequences, context and query lengths, and head shapes of attention cases (docs/verify.md).
#include "attention_draws.h"

#include <algorithm>

#include "gen_util.h"

namespace pagecheck::verify::gen::detail {
namespace {

/// The longest row a grid case draws: half as many tokens again as kGridLongRow (the CPU
/// reference stays within a few tenths of a second a case).
constexpr int64_t kGridLongestRow = kGridLongRow + kGridLongRow / 2;

/// k * P - 1, k * P or k * P + 1 for one of the partition sizes P (k at most 3, and contexts at
/// most about 3072 tokens, so that the CPU reference stays fast).
int64_t draw_split_edge(const std::vector<int64_t>& partitions) {
  const int64_t partition = pick_of(partitions);
  const int64_t k = draw_between(1, std::clamp<int64_t>(3072 / partition, 1, 3));
  return std::max<int64_t>(1, k * partition + pick<int64_t>({{1, -1}, {1, 0}, {1, 1}}));
}

int64_t draw_context(ContextKind kind, const SeqLimits& l, int size) {
  const int64_t bs = l.block_size;
  const bool large = l.budget == ContextBudget::kLarge;
  const bool tiny = l.budget == ContextBudget::kTiny;
  const bool grid = l.budget == ContextBudget::kGrid;
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
      return std::max<int64_t>(1, draw_between(2, tiny ? 3 : 2 + size / 10) * bs +
                                      pick<int64_t>({{1, 0}, {1, -1}, {1, 1}}));
    case ContextKind::kRandom:
    case ContextKind::kFullTable:  // at least this long; widened to the table once it is known
      if (grid) return draw_between(kGridLongRow, kGridLongestRow);
      return draw_between(1, tiny ? 40 : 2 + size * (large ? 1 : 3));
    case ContextKind::kLong: {
      const int64_t partition = *std::min_element(l.partitions.begin(), l.partitions.end());
      // Grid rows: at least kGridLongRow tokens (several partitions of any declared size).
      const int64_t grid_least = ceil_div(kGridLongRow, partition);
      const int64_t full =
          grid ? draw_between(grid_least, std::max(grid_least, kGridLongestRow / partition))
               : draw_between(1, large ? 2 : 1 + size / 25);
      const std::size_t tail_kind = draw_weighted({1, 1, 1, 3});
      const int64_t tail = tail_kind == 0   ? 0
                           : tail_kind == 1 ? -1
                           : tail_kind == 2 ? 1
                                            : draw_between(2, std::max<int64_t>(2, partition - 2));
      return std::max<int64_t>(1, full * partition + tail);
    }
    case ContextKind::kSplitEdge:
      return draw_split_edge(l.partitions);
    case ContextKind::kZero:
      return 0;
  }
  return 1;
}

}  // namespace

int64_t query_cap(int64_t max_query_len) {
  return std::clamp<int64_t>(max_query_len, 1, 48);
}

int64_t query_length(const SeqDraw& d, int64_t ctx, int64_t cap) {
  const int64_t room = ctx == 0 ? cap : std::min(cap, ctx);
  switch (d.query) {
    case QueryKind::kOne:
      return 1;
    case QueryKind::kFew:
      return room <= 1 ? 1 : 2 + d.query_pick % std::min<int64_t>(room - 1, 7);
    case QueryKind::kMoreThanRest:  // q > ctx - q: from ctx / 2 + 1 up to the room
      if (ctx == 0) return 1;
      return std::min(room, ctx / 2 + 1 + d.query_pick % std::max<int64_t>(1, room - ctx / 2));
    case QueryKind::kWhole:
      return ctx == 0 ? 1 : room;
    case QueryKind::kLongest:
      return room;
  }
  return 1;
}

rc::Gen<SeqDraw> seq_draw(const SeqLimits& limits) {
  return rc::gen::exec([limits] {
    const int size = current_size();
    const bool ordinary = limits.budget == ContextBudget::kOrdinary;
    const bool tiny = limits.budget == ContextBudget::kTiny;
    const bool grid = limits.budget == ContextBudget::kGrid;
    const auto weight = [](bool on, std::size_t w) { return on ? w : std::size_t{0}; };
    SeqDraw d;
    // A grid case's rows are mostly long (kRandom, kFullTable and kLong: 512-768 tokens), a
    // few short ones among them as in a served batch.
    const std::size_t short_weight = grid ? 1 : 3;
    d.kind = pick<ContextKind>({{grid ? 1 : 4, ContextKind::kOne},
                                {short_weight, ContextKind::kBlock},
                                {short_weight, ContextKind::kBlockMinus},
                                {short_weight, ContextKind::kBlockPlus},
                                {short_weight, ContextKind::kMultiBlock},
                                {5, ContextKind::kRandom},
                                {weight(!tiny, 2), ContextKind::kFullTable},
                                {weight(!tiny, grid         ? 8
                                               : size >= 20 ? 3
                                                            : 1),
                                 ContextKind::kLong},
                                {weight(ordinary && size >= 10, 2), ContextKind::kSplitEdge},
                                {weight(limits.context0 && !tiny, 2), ContextKind::kZero}});
    d.context_len = draw_context(d.kind, limits, size);
    if (limits.max_query_len > 1 && !tiny) {
      d.query = pick<QueryKind>({{3, QueryKind::kOne},
                                 {3, QueryKind::kFew},
                                 {2, QueryKind::kMoreThanRest},
                                 {1, QueryKind::kWhole},
                                 {1, QueryKind::kLongest}});
      if (d.query != QueryKind::kOne) d.query_pick = draw_between(0, 999);
    }
    d.share = pick<bool>({{3, false}, {1, true}});
    if (d.share) {
      d.parent_pick = draw_between(0, 1 << 20);
      d.share_pick = draw_between(0, 999);
    }
    return d;
  });
}

rc::Gen<int64_t> seq_count(ContextBudget budget) {
  return rc::gen::exec([budget] {
    const int64_t seq_cap = budget == ContextBudget::kLarge  ? 3
                            : budget == ContextBudget::kTiny ? 2
                                                             : 2 + current_size() / 6;
    const std::size_t seq_kind = draw_weighted({3, 3, 3});
    return seq_kind == 0   ? int64_t{1}
           : seq_kind == 1 ? pick_of(primes_up_to(seq_cap))
                           : draw_between(1, seq_cap);
  });
}

rc::Gen<int64_t> grid_seq_count(int64_t num_kv_heads) {
  return rc::gen::exec([num_kv_heads] {
    const int64_t least = ceil_div(kGridKvPairs, num_kv_heads);
    return least + draw_between(0, least / 4);
  });
}

HeadDraw draw_grid_heads() {
  // Served models' GQA and MHA shapes; with grid_seq_count's sequences, 128-160 (sequence, kv
  // head) pairs and 128-640 (sequence, head) rows, more than 512 in most cases of groups of 4.
  // Shrinks toward 4 kv heads and MHA.
  const int64_t kv = pick<int64_t>({{1, 4}, {3, 8}, {1, 16}});
  const int64_t group = pick<int64_t>({{2, 1}, {1, 2}, {2, 4}});
  return HeadDraw{kv * group, kv};
}

HeadDraw draw_ordinary_heads(int size, bool large) {
  enum class Shape { kMha, kGqa, kMqa };
  const Shape shape = pick<Shape>({{3, Shape::kMha}, {4, Shape::kGqa}, {2, Shape::kMqa}});
  const int64_t head_cap = large ? 2 : 1 + size / 12;
  HeadDraw h;
  if (shape == Shape::kMha) {
    h.num_kv_heads = draw_between(1, head_cap);
    h.num_heads = h.num_kv_heads;
  } else if (shape == Shape::kGqa) {
    h.num_kv_heads = draw_between(2, 2 + head_cap / 3);
    h.num_heads = h.num_kv_heads * draw_between(2, large ? 3 : 2 + size / 16);
  } else {
    h.num_kv_heads = 1;
    h.num_heads = draw_between(2, large ? 4 : 2 + size / 8);
  }
  return h;
}

HeadDraw draw_wide_heads() {
  // kv heads, then the group: each shrinks on its own toward a small GQA shape (2 kv heads,
  // groups of 2), so a failing wide case shrinks to the fewest heads that still fail. 64 kv
  // heads are weighted up: one token's keys then span 1024-2048 16-byte vectors.
  const int64_t kv =
      pick<int64_t>({{1, 2}, {3, 4}, {3, 8}, {2, 16}, {1, 32}, {1, 40}, {5, 64}, {4, 1}});
  if (kv == 1) return HeadDraw{pick<int64_t>({{2, 64}, {1, 96}, {2, 128}}), 1};  // MQA
  const std::vector<std::pair<std::size_t, int64_t>> groups{
      {1, 2}, {1, 3}, {1, 5}, {1, 6}, {1, 7}, {1, 8}, {4, 16}, {4, 32}, {2, 1}};
  std::vector<std::size_t> weights;
  std::vector<int64_t> fitting;  // at most 128 query heads
  for (const auto& [w, g] : groups) {
    if (kv * g > 128) continue;
    weights.push_back(w);
    fitting.push_back(g);
  }
  return HeadDraw{kv * fitting[draw_weighted(weights)], kv};
}

}  // namespace pagecheck::verify::gen::detail
