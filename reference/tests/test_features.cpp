/// Metamorphic properties of the attention features: windows, sinks, soft-caps, multi-token
/// (causal and non-causal) rows and padding rows, each stated as an equality with a simpler
/// problem whose answer follows from the definition in docs/reference.md.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "float64_bounds.h"
#include "pagecheck/reference/paged_attention.h"
#include "test_support.h"

namespace pagecheck {
namespace {

using ref::PagedAttentionProblem;
using ref::PagedAttentionResult;

using test::random_spec;

/// A problem drawn from a random spec: each property's starting point.
PagedAttentionProblem random_problem() {
  return verify::make_attention_problem(random_spec());
}

/// The reference computes both problems bit for bit alike: the same outputs and LSEs.
void assert_same_results(const PagedAttentionProblem& x, const PagedAttentionProblem& y) {
  const PagedAttentionResult a = ref::paged_attention(x, {1});
  const PagedAttentionResult b = ref::paged_attention(y, {1});
  RC_ASSERT(a.out == b.out);
  RC_ASSERT(a.lse == b.lse);
}

/// |b - a| <= rel * max(|a|, floor) for every output element and every lse (equal infinities
/// pass); `what` names the property in the failure message.
void expect_near(const PagedAttentionResult& a, const PagedAttentionResult& b, double rel,
                 const std::string& what) {
  RC_ASSERT(a.out.size() == b.out.size());
  for (std::size_t i = 0; i < a.out.size(); ++i) {
    if (!(std::fabs(a.out[i] - b.out[i]) <= rel * std::max(std::fabs(a.out[i]), 1e-2))) {
      RC_FAIL(what + ": out[" + std::to_string(i) + "] " + std::to_string(a.out[i]) + " vs " +
              std::to_string(b.out[i]));
    }
  }
  for (std::size_t i = 0; i < a.lse.size(); ++i) {
    if (a.lse[i] == b.lse[i]) continue;
    if (!(std::fabs(a.lse[i] - b.lse[i]) <= rel * std::max(std::fabs(a.lse[i]), 1.0))) {
      RC_FAIL(what + ": lse[" + std::to_string(i) + "] " + std::to_string(a.lse[i]) + " vs " +
              std::to_string(b.lse[i]));
    }
  }
}

/// A decode problem (one query row per sequence) with one sequence per query row of `p`: row
/// r of sequence s keeps s's block-table row and query, with context context_of(s, i) for
/// its i-th row.
template <typename ContextFn>
PagedAttentionProblem one_sequence_per_row(const PagedAttentionProblem& p, ContextFn context_of) {
  PagedAttentionProblem d = p;
  ref::RaggedBatch& b = d.batch;
  b = ref::RaggedBatch{};
  b.num_seqs = p.batch.num_query_tokens();
  b.max_blocks_per_seq = p.batch.max_blocks_per_seq;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    for (int64_t i = 0; i < p.batch.query_len(s); ++i) {
      b.context_lens.push_back(static_cast<int32_t>(context_of(s, i)));
      const auto row = p.batch.block_table.begin() + s * b.max_blocks_per_seq;
      b.block_table.insert(b.block_table.end(), row, row + b.max_blocks_per_seq);
    }
  }
  d.features.causal = true;
  return d;
}

RC_GTEST_PROP(Features, WindowCoveringEveryRowEqualsNoWindow, ()) {
  PagedAttentionProblem p = random_problem();
  p.features.window = 0;
  PagedAttentionProblem windowed = p;
  // Exactly the longest context (every row then attends from position 0), or more.
  windowed.features.window =
      std::max<int64_t>(1, p.batch.max_context_len()) + *rc::gen::element<int64_t>(0, 0, 1, 1000);
  assert_same_results(p, windowed);  // the same attended tokens: the same arithmetic
}

RC_GTEST_PROP(Features, SinksOfMinus1e30EqualNoSinks, ()) {
  PagedAttentionProblem p = random_problem();
  p.features.sinks.clear();
  PagedAttentionProblem sunk = p;
  sunk.features.sinks.assign(p.num_heads, -1e30f);  // exp(-1e30 - max) is exactly 0
  assert_same_results(p, sunk);
}

/// A sink adds exp(sink) to the denominator Z = exp(lse) and nothing to the numerator:
/// out_sink = out * Z / (Z + exp(sink)), lse_sink = lse + log(1 + exp(sink - lse)). Row 0's
/// sinks are its own lse values (rounded to float), which halves its output.
RC_GTEST_PROP(Features, ASinkScalesTheOutputByZOverZPlusExpSink, ()) {
  const verify::AttentionSpec spec = random_spec();
  PagedAttentionProblem p = verify::make_attention_problem(spec);
  p.features.sinks.clear();
  const PagedAttentionResult a = ref::paged_attention(p, {1});
  PagedAttentionProblem sunk = p;
  std::uniform_real_distribution<double> draw(-4.0, 6.0);
  std::mt19937_64 rng(spec.seed);
  for (int64_t h = 0; h < p.num_heads; ++h) {
    const double own = a.lse[h];  // row 0, head h
    sunk.features.sinks.push_back(static_cast<float>(std::isfinite(own) ? own : draw(rng)));
  }
  const PagedAttentionResult b = ref::paged_attention(sunk, {1});
  PagedAttentionResult expected = a;
  const int64_t hs = a.head_size;
  for (int64_t i = 0; i < a.num_rows * a.num_heads; ++i) {
    if (!std::isfinite(a.lse[i])) continue;  // a row that attends nothing stays 0 / -inf
    const double sink = sunk.features.sinks[i % a.num_heads];
    const double factor = 1.0 / (1.0 + std::exp(sink - a.lse[i]));
    for (int64_t d = 0; d < hs; ++d) expected.out[i * hs + d] *= factor;
    expected.lse[i] = a.lse[i] + std::log1p(std::exp(sink - a.lse[i]));
  }
  expect_near(expected, b, 1e-12, "out * Z / (Z + e^sink)");
  // Row 0's sink is its lse rounded to float (relative 2^-24): the output is halved.
  for (int64_t i = 0; i < a.num_heads * hs; ++i) {
    const double lse = a.lse[i / hs];
    if (!std::isfinite(lse)) break;
    const double allowed = 0x1p-23 * std::max(1.0, std::fabs(lse)) * std::fabs(a.out[i]);
    RC_ASSERT(std::fabs(b.out[i] - 0.5 * a.out[i]) <= allowed);
  }
}

RC_GTEST_PROP(Features, SoftCapOf1e30EqualsNone, ()) {
  PagedAttentionProblem p = random_problem();
  p.features.soft_cap = 0;
  PagedAttentionProblem capped = p;
  capped.features.soft_cap = 1e30f;  // cap * tanh(x / cap) = x up to rounding
  // (x / cap) * cap is x up to 2 ulp: logits up to ~400 move by 1e-13, outputs (floor 1e-2)
  // by up to 1e-11 relative.
  expect_near(ref::paged_attention(p, {1}), ref::paged_attention(capped, {1}), 1e-10, "cap 1e30");
}

/// The soft-cap applies to scale * q.k before ALiBi: a tiny cap flattens the dot products to
/// ~0 and leaves the ALiBi term whole, which is the attention of a zero query.
RC_GTEST_PROP(Features, TinySoftCapLeavesOnlyAlibi, ()) {
  PagedAttentionProblem p = random_problem();
  p.features.soft_cap = 1e-12f;
  PagedAttentionProblem zero = p;
  zero.features.soft_cap = 0;
  for (int64_t row = 0; row < p.query_layout.num_tokens; ++row) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      for (int64_t d = 0; d < p.head_size(); ++d) {
        store_element(p.dtype, zero.query.data(), p.query_layout.offset(row, h, d), 0.0);
      }
    }
  }
  // Logits move by at most 1e-12, so weights by a relative 2e-12 and outputs by 2e-12 max|v|
  // (|v| < 10 here).
  expect_near(ref::paged_attention(zero, {1}), ref::paged_attention(p, {1}), 2e-9, "cap 1e-12");
}

/// Causal row i of a sequence sits at position p = context - q_len + i and sees exactly what a
/// decode of the context truncated to p + 1 tokens sees, bit for bit.
RC_GTEST_PROP(Features, MultiTokenRowEqualsDecodeOfItsTruncatedContext, ()) {
  PagedAttentionProblem p = random_problem();
  p.features.causal = true;
  RC_PRE(p.batch.max_query_len() > 1);
  const PagedAttentionProblem d = one_sequence_per_row(p, [&](int64_t s, int64_t i) {
    const int64_t ctx = p.batch.context_lens[s];
    return ctx == 0 ? 0 : ctx - p.batch.query_len(s) + i + 1;
  });
  assert_same_results(p, d);
}

/// Non-causal rows (no window, no ALiBi) all attend the whole context: each equals a decode of
/// the full context with its own query, bit for bit.
RC_GTEST_PROP(Features, NonCausalRowsAttendTheWholeContext, ()) {
  const verify::AttentionSpec spec = random_spec();
  PagedAttentionProblem p = verify::make_attention_problem(spec);
  p.features.causal = false;
  p.features.window = 0;
  p.features.alibi_slopes.clear();
  RC_PRE(p.batch.max_query_len() > 1);
  const PagedAttentionProblem d =
      one_sequence_per_row(p, [&](int64_t s, int64_t) { return p.batch.context_lens[s]; });
  const PagedAttentionResult a = ref::paged_attention(p, {1});
  const PagedAttentionResult b = ref::paged_attention(d, {1});
  RC_ASSERT(a.out == b.out);
  RC_ASSERT(a.lse == b.lse);
  // And they differ from causal rows once a row has a future token (of a weight that shows:
  // flat logits).
  bool future = false;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    future |= p.batch.context_lens[s] > 0 && p.batch.query_len(s) > 1;
  }
  PagedAttentionProblem causal = p;
  causal.features.causal = true;
  RC_ASSERT(!future || spec.spread > 1 || ref::paged_attention(causal, {1}).out != a.out);
}

/// Padding rows (context 0) give out = 0 and lse = -inf, and removing their sequences leaves
/// every other row bit for bit as it was.
RC_GTEST_PROP(Features, ContextZeroRowsAreZerosAndChangeNothingElse, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.context_lens.push_back(0);
  if (!spec.query_lens.empty()) spec.query_lens.push_back(*rc::gen::inRange(1, 4));
  std::swap(spec.context_lens.front(), spec.context_lens.back());
  if (!spec.query_lens.empty()) std::swap(spec.query_lens.front(), spec.query_lens.back());
  const PagedAttentionProblem p = verify::make_attention_problem(spec);
  const PagedAttentionResult a = ref::paged_attention(p, {2});
  // Without the padding sequences: their block-table rows and query rows left out.
  PagedAttentionProblem kept = p;
  ref::RaggedBatch& b = kept.batch;
  b.num_seqs = 0;
  b.context_lens.clear();
  b.block_table.clear();
  b.query_start.assign(1, 0);
  std::vector<int64_t> rows;  // rows of p that stay, in order
  const int64_t hs = p.head_size(), cols = p.batch.max_blocks_per_seq;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    const int64_t q = p.batch.query_len(s), first = p.batch.query_begin(s);
    if (p.batch.context_lens[s] == 0) {
      for (int64_t r = first; r < first + q; ++r) {
        for (int64_t i = r * p.num_heads; i < (r + 1) * p.num_heads; ++i) {
          RC_ASSERT(a.lse[i] == -std::numeric_limits<double>::infinity());
          for (int64_t d = 0; d < hs; ++d) RC_ASSERT(a.out[i * hs + d] == 0.0);
        }
      }
      continue;
    }
    ++b.num_seqs;
    b.context_lens.push_back(p.batch.context_lens[s]);
    b.block_table.insert(b.block_table.end(), p.batch.block_table.begin() + s * cols,
                         p.batch.block_table.begin() + (s + 1) * cols);
    b.query_start.push_back(static_cast<int32_t>(b.query_start.back() + q));
    for (int64_t r = first; r < first + q; ++r) rows.push_back(r);
  }
  RC_PRE(b.num_seqs > 0);
  kept.query_layout = ref::TokenLayout::packed(static_cast<int64_t>(rows.size()), p.num_heads, hs);
  kept.query.assign(kept.query_layout.span() * dtype_size(p.dtype), std::byte{0});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      for (int64_t d = 0; d < hs; ++d) {
        store_element(p.dtype, kept.query.data(),
                      kept.query_layout.offset(static_cast<int64_t>(r), h, d),
                      load_element(p.dtype, p.query.data(), p.query_layout.offset(rows[r], h, d)));
      }
    }
  }
  const PagedAttentionResult c = ref::paged_attention(kept, {2});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int64_t n = p.num_heads * hs;
    RC_ASSERT(std::equal(c.out.begin() + r * n, c.out.begin() + (r + 1) * n,
                         a.out.begin() + rows[r] * n));
    RC_ASSERT(std::equal(c.lse.begin() + r * p.num_heads, c.lse.begin() + (r + 1) * p.num_heads,
                         a.lse.begin() + rows[r] * p.num_heads));
  }
}

/// With a window W, a sequence's tokens before position context - q_len - W + 1 are attended
/// by no row: NaN there changes nothing (the reference never reads them).
RC_GTEST_PROP(Features, TokensNoRowAttendsAreNeverRead, ()) {
  verify::AttentionSpec spec = random_spec();
  spec.share_prefix = false;  // a shared block's early token may be another's attended one
  PagedAttentionProblem p = verify::make_attention_problem(spec);
  p.features.window = *rc::gen::inRange<int64_t>(1, 2 * p.block_size() + 2);
  PagedAttentionProblem poisoned = p;
  std::vector<std::byte>& values = p.cache.combined ? poisoned.key_cache : poisoned.value_cache;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t bs = p.block_size(), cols = p.batch.max_blocks_per_seq;
  int64_t poisoned_tokens = 0;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    const int64_t ctx = p.batch.context_lens[s];
    const int64_t first_seen = ctx - p.batch.query_len(s) - p.features.window + 1;
    for (int64_t t = 0; t < std::min(first_seen, ctx); ++t, ++poisoned_tokens) {
      const int64_t block = p.batch.block_table[s * cols + t / bs];
      for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
        for (int64_t d = 0; d < p.head_size(); ++d) {
          store_element(p.cache.dtype, poisoned.key_cache.data(),
                        p.cache.key_at(block, h, t % bs, d), nan);
          store_element(p.cache.dtype, values.data(), p.cache.value_at(block, h, t % bs, d), nan);
        }
      }
    }
  }
  RC_CLASSIFY(poisoned_tokens > 0, "tokens poisoned");
  assert_same_results(p, poisoned);
}

}  // namespace
}  // namespace pagecheck
