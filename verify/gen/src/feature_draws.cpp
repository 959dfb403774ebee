/// Sinks, windows, soft-caps and token strides of attention cases.
#include "feature_draws.h"

#include <algorithm>

#include "gen_util.h"

namespace pagecheck::verify::gen::detail {
namespace {

/// A sink of one kind: 0 moderate, 1 far above, 2 far below the logits.
float sink_of(int kind, double bound, uint64_t h) {
  const double u = unit(h);
  if (kind == 1) return static_cast<float>(bound + kFarSink + 10.0 * u);
  if (kind == 2) return static_cast<float>(-bound - kFarSink - 10.0 * u);
  return static_cast<float>(8.0 * u - 4.0);
}

}  // namespace

double logit_bound(Regime regime) {
  return regime == Regime::kExtreme ? 1.0e4 : 10.0;
}

double logit_spread(Regime regime) {
  switch (regime) {
    case Regime::kFlat:
      return 1.0;
    case Regime::kPeaked:
    case Regime::kFullRange:  // peaked logits
      return 8.0;
    case Regime::kExtreme:
      return 1.0e4;
    default:
      return 2.0;
  }
}

std::vector<float> draw_sinks(int64_t num_heads, Regime regime) {
  // 0..2: every head of one kind; 3: each head's kind from the seed.
  const std::size_t kind = draw_weighted({2, 2, 2, 1});
  const uint64_t seed = draw_seed();
  std::vector<float> sinks(static_cast<std::size_t>(num_heads));
  for (int64_t h = 0; h < num_heads; ++h) {
    const int k = kind < 3 ? static_cast<int>(kind) : static_cast<int>(mix_index(seed, -h) % 3);
    sinks[h] = sink_of(k, logit_bound(regime), mix_index(seed, h));
  }
  return sinks;
}

int64_t draw_window(const AttentionSpec& s) {
  const int64_t longest = std::max<int64_t>(1, largest_context(s));
  // The sequence the window's edges are measured against.
  const int64_t seq = draw_between(0, s.num_seqs - 1);
  const int64_t ctx = std::max<int64_t>(1, s.context_lens[seq]);
  const std::size_t kind = draw_weighted({2, 2, 2, 2, 3});
  if (kind == 0) return 1;
  if (kind == 1) return ctx;
  if (kind == 2) return longest + draw_between(1, 2 * s.block_size);
  if (kind == 3) {
    // The first attended position ctx - W of the sequence's last row sits on a block edge.
    const int64_t blocks = draw_between(0, (ctx - 1) / s.block_size);
    return ctx - blocks * s.block_size;
  }
  return draw_between(1, longest);
}

float draw_soft_cap(Regime regime) {
  const std::size_t kind = draw_weighted({2, 2, 1});
  const double u = unit(draw_seed());
  if (kind == 0) return static_cast<float>(std::min(logit_spread(regime), 2.0) * (0.25 + 0.5 * u));
  if (kind == 1) return static_cast<float>(5.0 + 45.0 * u);
  return static_cast<float>(1.0e3 * (1.0 + 9.0 * u));
}

void draw_token_strides(const VariantCaps& caps, AttentionSpec& s) {
  const int64_t x = dtype_x(s.dtype);
  const bool token = caps.has(PC_CAP_TOKEN_STRIDE), head = caps.has(PC_CAP_HEAD_STRIDE);
  const auto weight = [](bool on, std::size_t w) { return on ? w : std::size_t{0}; };
  if (token || head) {
    const std::size_t kind =
        draw_weighted({3, weight(token, 2), weight(token, 1), weight(head, 1)});
    if (kind == 1) s.query_pad.token = 2 * s.num_kv_heads * s.head_size;  // fused QKV
    if (kind == 2) s.query_pad.token = x * draw_between(1, 4);
    if (kind == 3) s.query_pad = {token ? x * draw_between(0, 4) : 0, x * draw_between(1, 2)};
  }
  if (caps.has(PC_CAP_STRIDED_OUTPUT) && pick<bool>({{4, false}, {1, true}})) {
    s.out_pad = {x * draw_between(1, 8), x * draw_between(0, 2)};
  }
}

}  // namespace pagecheck::verify::gen::detail
