/// Shrinking without a kernel: the generator's tree removes any sequence and shrinks each one on
/// its own; the spec's own shrinks (the second pass) are valid and remove any sequence or token.
#include <gtest/gtest.h>

#include <algorithm>

#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/spec_shrink.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

/// The partition size the long contexts of a variant without declared sizes are built around.
const int64_t kPartition = gen::default_partition_sizes().front();

int64_t longer_than(const gen::AttentionSpec& s, int64_t length) {
  return std::count_if(s.context_lens.begin(), s.context_lens.end(),
                       [length](int32_t len) { return len > length; });
}

/// Roots of the generator's shrink tree over a run of cases with at least `seqs` sequences
/// longer than `length` (and some other sequence besides).
std::vector<rc::Shrinkable<gen::CaseSpec>> roots_with(int64_t seqs, int64_t length) {
  check::Target target;
  target.caps = test::decode_caps(PC_FAMILY_PAGED_ATTENTION);
  std::vector<rc::Shrinkable<gen::CaseSpec>> roots;
  for (int64_t i = 0; i < 400 && roots.size() < 12; ++i) {
    const check::CaseParams p = check::case_params(target, 5, 400, i);
    auto root = check::case_generator(target, p)(rc::Random(p.rc_seed), p.size);
    const auto s = std::get<gen::AttentionSpec>(root.value());  // value() is a copy
    if (longer_than(s, length) >= seqs && s.num_seqs > seqs) roots.push_back(root);
  }
  return roots;
}

TEST(VerifyShrink, TheGeneratorsTreeRemovesAnySequence) {
  // A "bug" that needs one sequence over a split-K partition, wherever it stands among others.
  const auto roots = roots_with(1, kPartition);
  ASSERT_GE(roots.size(), 5u);
  bool long_one_not_first = false;
  for (const auto& root : roots) {
    const auto s = std::get<gen::AttentionSpec>(root.value());  // value() is a copy
    long_one_not_first = long_one_not_first || s.context_lens[0] <= kPartition;
    const auto min = rc::shrinkable::findLocalMin(root, [](const gen::CaseSpec& c) {
      return longer_than(std::get<gen::AttentionSpec>(c), kPartition) >= 1;
    });
    const auto& shrunk = std::get<gen::AttentionSpec>(min.first);
    EXPECT_EQ(shrunk.num_seqs, 1) << gen::describe(root.value()) << "\nshrunk to\n"
                                  << gen::describe(min.first);
    EXPECT_GT(shrunk.context_lens[0], kPartition);
    // That is a local minimum of the generator's choices (two partitions of 512 tokens can
    // stay: one fails the predicate); the spec's own shrinks then cut it to just over one.
    const auto both = std::get<gen::AttentionSpec>(gen::shrink_case(root, [](const auto& c) {
      return longer_than(std::get<gen::AttentionSpec>(c), kPartition) >= 1;
    }));
    EXPECT_EQ(both.context_lens, std::vector<int32_t>{static_cast<int32_t>(kPartition + 1)});
  }
  EXPECT_TRUE(long_one_not_first);  // the test covers sequences behind others
}

TEST(VerifyShrink, EachSequenceShrinksOnItsOwn) {
  // Two sequences must stay over 24 tokens: every other sequence goes and each of the two
  // shrinks on its own to 25, whatever the other one holds.
  const auto roots = roots_with(2, 24);
  ASSERT_GE(roots.size(), 3u);
  bool long_start = false;
  for (const auto& root : roots) {
    long_start = long_start || longer_than(std::get<gen::AttentionSpec>(root.value()), 64) >= 2;
    const gen::CaseSpec min = gen::shrink_case(root, [](const gen::CaseSpec& c) {
      return longer_than(std::get<gen::AttentionSpec>(c), 24) >= 2;
    });
    const auto& shrunk = std::get<gen::AttentionSpec>(min);
    EXPECT_EQ(shrunk.context_lens, (std::vector<int32_t>{25, 25})) << gen::describe(min);
  }
  EXPECT_TRUE(long_start);  // some case started with both sequences far longer
}

TEST(VerifyShrink, SpecShrinksAreValidAndRemoveAnySequenceOrToken) {
  check::Target attention, gather;
  attention.caps = test::full_caps(PC_FAMILY_PAGED_ATTENTION);
  gather.caps = test::full_caps(PC_FAMILY_GATHER_CACHED_KV);
  int checked = 0, with_queries = 0;
  for (int64_t i = 0; i < 200; ++i) {
    const auto a = std::get<gen::AttentionSpec>(
        check::generate_case(attention, check::case_params(attention, 9, 200, i)));
    const std::vector<gen::CaseSpec> shrinks = gen::spec_shrinks(a);
    for (const auto& c : shrinks) EXPECT_NO_THROW(gen::validate(c));
    if (a.num_seqs < 3) continue;
    ++checked;
    ASSERT_GE(shrinks.size(), static_cast<std::size_t>(a.num_seqs));
    for (int64_t q = 0; q < a.num_seqs; ++q) {  // without sequence q (and its query)
      std::vector<int32_t> expected = a.context_lens, queries = a.query_lens;
      expected.erase(expected.begin() + q);
      if (!queries.empty()) queries.erase(queries.begin() + q);
      EXPECT_EQ(std::get<gen::AttentionSpec>(shrinks[q]).context_lens, expected);
      EXPECT_EQ(std::get<gen::AttentionSpec>(shrinks[q]).query_lens, queries);
    }
    // The last shrinks shorten the last query, or (decode) the last sequence, toward 1 first.
    const auto& last = std::get<gen::AttentionSpec>(shrinks.back());
    if (!a.query_lens.empty() && a.query_lens.back() > 1) {
      EXPECT_LT(last.query_lens.back(), a.query_lens.back());
      ++with_queries;
    } else if (a.query_lens.empty() && a.context_lens.back() > 1) {
      EXPECT_LT(last.context_lens.back(), a.context_lens.back());
    }
    // Every feature can go.
    const auto has = [&](auto pred) {
      return std::any_of(shrinks.begin(), shrinks.end(), [&](const gen::CaseSpec& c) {
        return pred(std::get<gen::AttentionSpec>(c));
      });
    };
    if (!a.sinks.empty()) {
      EXPECT_TRUE(has([](const auto& c) { return c.sinks.empty(); }));
    }
    if (a.window > 0) {
      EXPECT_TRUE(has([](const auto& c) { return c.window == 0; }));
    }
    if (!a.query_lens.empty()) {
      EXPECT_TRUE(has([](const auto& c) { return c.query_lens.empty(); }));
    }
  }
  EXPECT_GT(checked, 20);
  EXPECT_GT(with_queries, 5);
  for (int64_t i = 0; i < 50; ++i) {
    const auto g =
        std::get<gen::CopySpec>(check::generate_case(gather, check::case_params(gather, 9, 50, i)));
    const std::vector<gen::CaseSpec> shrinks = gen::spec_shrinks(g);
    ASSERT_EQ(shrinks.size(), g.slot_mapping.size() > 1 ? g.slot_mapping.size() : 0u);
    for (std::size_t t = 0; t < shrinks.size(); ++t) {
      std::vector<int64_t> expected = g.slot_mapping;
      expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(t));
      EXPECT_EQ(std::get<gen::CopySpec>(shrinks[t]).slot_mapping, expected);
    }
  }
}

TEST(VerifyShrink, TheSpecsTreeCompactsTheTableAndThePool) {
  gen::AttentionSpec s;
  s.block_size = 8;
  s.num_seqs = 2;
  s.context_lens = {9, 3};
  s.max_blocks_per_seq = 4;
  s.num_blocks = 9;
  s.block_table = {7, 2, -1, -1, 5, -1, -1, -1};
  // Whatever still holds a sequence of 9 tokens: the other sequence, the spare columns and the
  // unused blocks go; the blocks are renumbered in order of use.
  const auto min = rc::shrinkable::findLocalMin(gen::shrinkable_spec(s), [](const auto& c) {
    return longer_than(std::get<gen::AttentionSpec>(c), 8) >= 1;
  });
  const auto& shrunk = std::get<gen::AttentionSpec>(min.first);
  EXPECT_EQ(shrunk.context_lens, std::vector<int32_t>{9});
  EXPECT_EQ(shrunk.max_blocks_per_seq, 2);
  EXPECT_EQ(shrunk.num_blocks, 2);
  EXPECT_EQ(shrunk.block_table, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace pagecheck::verify
