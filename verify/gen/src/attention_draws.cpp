/// Sequences, context lengths and head shapes of attention cases (see docs/verify.md).
#include "attention_draws.h"

#include <algorithm>

#include "gen_util.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::gen::detail {
namespace {

int64_t draw_split_edge() {
  const int64_t partition = pick<int64_t>({{2, 256}, {2, 512}, {1, 1024}});
  const int64_t k = draw_between(1, partition == 1024 ? 2 : 3);
  return k * partition + pick<int64_t>({{1, -1}, {1, 0}, {1, 1}});
}

int64_t draw_context(ContextKind kind, int64_t bs, int size, ContextBudget budget) {
  const bool large = budget == ContextBudget::kLarge;
  const bool tiny = budget == ContextBudget::kTiny;
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
      return draw_between(1, tiny ? 40 : 2 + size * (large ? 1 : 3));
    case ContextKind::kLong: {
      const int64_t full = draw_between(1, large ? 2 : 1 + size / 25);
      const std::size_t tail_kind = draw_weighted({1, 1, 1, 3});
      const int64_t tail = tail_kind == 0   ? 0
                           : tail_kind == 1 ? -1
                           : tail_kind == 2 ? 1
                                            : draw_between(2, kPartitionSize - 2);
      return full * kPartitionSize + tail;
    }
    case ContextKind::kSplitEdge:
      return draw_split_edge();
  }
  return 1;
}

}  // namespace

rc::Gen<SeqDraw> seq_draw(int64_t bs, ContextBudget budget) {
  return rc::gen::exec([bs, budget] {
    const int size = current_size();
    const bool ordinary = budget == ContextBudget::kOrdinary;
    const bool tiny = budget == ContextBudget::kTiny;
    const auto weight = [](bool on, std::size_t w) { return on ? w : std::size_t{0}; };
    SeqDraw d;
    d.kind = pick<ContextKind>({{4, ContextKind::kOne},
                                {3, ContextKind::kBlock},
                                {3, ContextKind::kBlockMinus},
                                {3, ContextKind::kBlockPlus},
                                {3, ContextKind::kMultiBlock},
                                {5, ContextKind::kRandom},
                                {weight(!tiny, 2), ContextKind::kFullTable},
                                {weight(!tiny, size >= 20 ? 3 : 1), ContextKind::kLong},
                                {weight(ordinary && size >= 10, 2), ContextKind::kSplitEdge}});
    d.context_len = draw_context(d.kind, bs, size, budget);
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
