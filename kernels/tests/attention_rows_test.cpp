// The rows and partitions of v1 / v2_split (kernels/src/attention/attention_rows.h) against a
// brute-force reading of docs/reference.md, on fresh random shapes (CPU only): a row attends
// exactly { t < ctx : (not causal or t <= p) and (window = 0 or t > p - window) }; the
// partitions cover that range exactly, none is empty, none starts wholly before the window, and
// their number stays within the host-side bound the grid and the workspace are sized for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "attention/attention_params.h"
#include "attention/attention_rows.h"

namespace pagecheck::kernels {
namespace {

struct Shape {
  int ctx, q_len, i, window, tile, size;
  bool causal;
};

/// The reference's definition, token by token.
bool attends(const Shape& s, int t) {
  const int p = s.ctx - s.q_len + s.i;
  return t >= 0 && t < s.ctx && (!s.causal || t <= p) && (s.window == 0 || t > p - s.window);
}

void check_row(const Shape& s) {
  SCOPED_TRACE(::testing::Message()
               << "ctx " << s.ctx << " q_len " << s.q_len << " i " << s.i << " window " << s.window
               << " causal " << s.causal << " tile " << s.tile << " partition " << s.size);
  const AttentionRow r = attention_row(s.ctx, s.q_len, s.i, s.window, s.causal, s.tile);
  ASSERT_EQ(r.pos, s.ctx - s.q_len + s.i);
  ASSERT_LE(r.lo, r.hi);
  for (int t = -2; t < s.ctx + 2; ++t) {
    ASSERT_EQ(attends(s, t), t >= r.lo && t < r.hi) << "token " << t;
  }
  if (s.ctx >= 1) ASSERT_LT(r.lo, r.hi) << "a row of a non-empty context attends its own token";
  ASSERT_EQ(r.base % s.tile, 0);
  ASSERT_LE(r.base, r.lo);
  ASSERT_LT(r.lo - r.base, s.tile);

  const int parts = row_partitions(r, s.size);
  int covered = 0;
  for (int j = 0; j < parts; ++j) {
    const int start = r.base + j * s.size;
    const int lo = start > r.lo ? start : r.lo;
    const int hi = start + s.size < r.hi ? start + s.size : r.hi;
    ASSERT_LT(lo, hi) << "partition " << j << " is empty";
    // The first tile the partition reads holds an attended token: no tile wholly before the
    // window is read.
    ASSERT_GT(start + s.tile, r.lo) << "partition " << j;
    covered += hi - lo;
  }
  ASSERT_EQ(covered, r.hi - r.lo);
  ASSERT_GE(r.base + parts * s.size, r.hi);  // the next partition starts past the range
  const int64_t span = attention_span_bound(s.ctx, s.window, s.q_len);
  ASSERT_LE(r.hi - r.base, span);
  const int64_t bound = (span + s.size - 1) / s.size;
  ASSERT_LE(parts, bound > 0 ? bound : 1);
}

TEST(AttentionRows, RandomRowsMatchTheReferenceDefinition) {
  std::mt19937 rng(std::random_device{}());
  const int tiles[] = {8, 16, 32};
  for (int n = 0; n < 20000; ++n) {
    Shape s{};
    s.ctx = std::uniform_int_distribution<int>(0, n % 4 == 0 ? 40 : 5000)(rng);
    s.q_len = s.ctx == 0
                  ? std::uniform_int_distribution<int>(1, kMaxQueryLen)(rng)
                  : std::uniform_int_distribution<int>(1, std::min(s.ctx, kMaxQueryLen))(rng);
    s.i = std::uniform_int_distribution<int>(0, s.q_len - 1)(rng);
    s.window = n % 3 == 0 ? 0 : std::uniform_int_distribution<int>(1, 300)(rng);
    s.causal = n % 5 != 0;
    s.tile = tiles[n % 3];
    s.size = kPartitionSizes[static_cast<size_t>(n) % kPartitionSizes.size()];
    check_row(s);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(AttentionRows, EdgeRows) {
  // Window of 1 (the row's own token), window exactly at a tile and a partition edge, the
  // first new token of a non-causal row (sees the later ones), decode, context 0.
  const Shape shapes[] = {
      {1000, 1, 0, 1, 32, 256, true},    {1000, 4, 0, 32, 32, 256, true},
      {1024, 1, 0, 256, 16, 256, true},  {1025, 1, 0, 256, 8, 256, true},
      {600, 16, 0, 100, 32, 384, false}, {600, 16, 15, 100, 32, 384, false},
      {1, 1, 0, 0, 8, 256, true},        {0, 3, 2, 0, 16, 256, true},
      {5000, 1, 0, 0, 32, 1024, true},   {300, 2, 1, 5000, 32, 256, false},
  };
  for (const Shape& s : shapes) check_row(s);
}

TEST(AttentionRows, WindowedSpanIsTheWindowNotTheContext) {
  // A windowed launch sizes its partitions over the window: 100000 tokens, W = 1000, 4 new
  // tokens give at most 1000 + 3 + 31 tokens per row, i.e. 5 partitions of 256, not 391.
  EXPECT_EQ(attention_span_bound(100000, 1000, 4), 1034);
  EXPECT_EQ(attention_span_bound(100000, 0, 4), 100000);
  EXPECT_EQ(attention_span_bound(500, 1000, 1), 500);
  EXPECT_EQ(attention_span_bound(0, 0, 1), 0);
}

}  // namespace
}  // namespace pagecheck::kernels
