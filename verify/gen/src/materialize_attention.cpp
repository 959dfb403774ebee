/// Contents and poison of paged-attention cases.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "buffers.h"
#include "ceil_div.h"
#include "contents.h"
#include "fp8_scales.h"
#include "full_range.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::verify::gen {
namespace {

using detail::hash;
using detail::symmetric;

/// Per (sequence, kv head): the unit direction of peaked attention and the dominant tokens.
struct PeakPlan {
  std::vector<double> direction;  ///< unit vector, head_size entries
  std::vector<int64_t> dominant;  ///< token positions whose logits stand out
};

PeakPlan make_plan(const AttentionSpec& s, int64_t seq, int64_t kv_head) {
  PeakPlan plan;
  const uint64_t seed = s.content_seed;
  plan.direction.resize(s.head_size);
  double norm = 0;
  for (int64_t d = 0; d < s.head_size; ++d) {
    // Sum of three uniforms: roughly normal, so the direction has no preferred axis.
    double v = 0;
    for (uint64_t k = 0; k < 3; ++k)
      v += symmetric(hash(seed, detail::kTagDirection, seq, kv_head, d, k));
    plan.direction[d] = v;
    norm += v * v;
  }
  norm = std::sqrt(std::max(norm, 1e-30));
  for (double& v : plan.direction) v /= norm;
  const int64_t ctx = s.context_lens[seq];
  if (ctx == 0) return plan;
  const uint64_t h = hash(seed, detail::kTagDominant, seq, kv_head);
  const int64_t count = 1 + static_cast<int64_t>(h % 3);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t hi = hash(seed, detail::kTagDominant, seq, kv_head, i + 1);
    int64_t pos = static_cast<int64_t>(hi % static_cast<uint64_t>(ctx));
    if (i == 0 && (h & 8)) {
      // Half the time one dominant key sits in the last block: skipping it must show.
      const int64_t last_block_len = ctx - (ctx - 1) / s.block_size * s.block_size;
      pos = ctx - 1 - static_cast<int64_t>(hi % static_cast<uint64_t>(last_block_len));
    }
    plan.dominant.push_back(pos);
  }
  return plan;
}

/// Extreme regime: the even dimensions carry a large logit component, scale * A * B * D / 2
/// with q_d = A * sign_d and k_d = B_t * sign_d, so that logits reach about 1e4 with finite
/// float16 inputs; the odd dimensions carry ordinary contents.
constexpr double kExtremeQuery = 16.0;  ///< A (exact in every dtype)
constexpr double kExtremeGap = 1.0e4;   ///< distance of the low tokens below the high ones
/// Amplitude of the odd dimensions: a logit spread of about 4 units within a level, so few
/// tokens dominate and the bound (whose L term grows with |logit|) stays tight.
constexpr double kExtremeOrdinary = 4.0;
/// Largest |level| extreme_level returns.
constexpr double kExtremeLevel = 10010.0;

/// Sign of dimension d of a (sequence, kv head) group's large component.
double extreme_sign(const AttentionSpec& s, int64_t seq, int64_t kv_head, int64_t d) {
  return (hash(s.content_seed, detail::kTagDirection, seq, kv_head, d) & 1) ? -1.0 : 1.0;
}

/// Target logit level of token t of a (sequence, kv head) group. Modes (from the seed): whole
/// blocks 1e4 below the high ones; whole split-K partitions (spec.extreme_partition tokens)
/// 1e4 below; every token near +9990 (no max subtraction overflows); every token near -10010
/// (below a -1e4 sentinel).
double extreme_level(const AttentionSpec& s, int64_t seq, int64_t kv_head, int64_t t) {
  const uint64_t h = hash(s.content_seed, detail::kTagLevel, seq, kv_head);
  const int64_t mode = static_cast<int64_t>(h % 4);
  if (mode == 2) return 9990.0;
  if (mode == 3) return -kExtremeLevel;
  const double high = (h & 16) ? 5000.0 : 0.0;
  const int64_t unit = mode == 0 || s.extreme_partition <= 0 ? s.block_size : s.extreme_partition;
  const int64_t units = detail::ceil_div(s.context_lens[seq], unit);
  const int64_t forced_high = static_cast<int64_t>((h >> 8) % static_cast<uint64_t>(units));
  const int64_t u = t / unit;
  const bool low =
      u != forced_high && (hash(s.content_seed, detail::kTagLevel, seq, kv_head, u + 1) & 1);
  return low ? high - kExtremeGap : high;
}

/// Query row `row` of sequence `seq` (row 0 is the decode query: its contents do not depend on
/// whether more rows follow).
double query_value(const AttentionSpec& s, const PeakPlan& plan, int64_t seq, int64_t row,
                   int64_t head, int64_t d) {
  const uint64_t h = hash(s.content_seed, detail::kTagQuery, seq, head, d, row);
  if (s.regime == Regime::kExtreme) {
    const int64_t kv_head = head / (s.num_heads / s.num_kv_heads);
    return d % 2 == 0 ? kExtremeQuery * extreme_sign(s, seq, kv_head, d)
                      : kExtremeOrdinary * symmetric(h);
  }
  switch (s.regime) {
    case Regime::kPeaked:
    case Regime::kFullRange:  // peaked logits; the values carry the range
      // scale * |q| = 1 along the direction, so the logit of a key is about its beta.
      return plan.direction[d] / s.scale + 0.3 * symmetric(h);
    case Regime::kMixed:
      return detail::mixed_magnitude(h, -0.7, 0.5);
    default:
      return symmetric(h);
  }
}

double key_value(const AttentionSpec& s, const PeakPlan& plan, int64_t seq, int64_t token,
                 int64_t kv_head, int64_t d) {
  const uint64_t h = hash(s.content_seed, detail::kTagKey, seq * 1000003 + token, kv_head, d);
  if (s.regime == Regime::kExtreme) {
    if (d % 2 != 0) return kExtremeOrdinary * symmetric(h);
    const double big_dims = static_cast<double>((s.head_size + 1) / 2);
    const double b = extreme_level(s, seq, kv_head, token) /
                     (static_cast<double>(s.scale) * kExtremeQuery * big_dims);
    return b * extreme_sign(s, seq, kv_head, d);
  }
  switch (s.regime) {
    case Regime::kPeaked:
    case Regime::kFullRange: {
      const bool dominant =
          std::find(plan.dominant.begin(), plan.dominant.end(), token) != plan.dominant.end();
      const double u = detail::unit(hash(s.content_seed, detail::kTagBeta, seq, token, kv_head));
      const double beta = dominant ? 6.0 + 3.0 * u : -2.0 + 3.0 * u;
      return beta * plan.direction[d] + 0.2 * symmetric(h);
    }
    case Regime::kMixed:
      return detail::mixed_magnitude(h, -0.7, 0.5);
    default:
      return symmetric(h);
  }
}

double value_value(const AttentionSpec& s, int64_t seq, int64_t token, int64_t kv_head, int64_t d) {
  const uint64_t h = hash(s.content_seed, detail::kTagValue, seq * 1000003 + token, kv_head, d);
  if (s.regime == Regime::kMixed) return detail::mixed_magnitude(h, -2.0, 1.2);
  if (s.regime == Regime::kFullRange) {
    // An fp8 V: the head's scale maps 1 to the largest code (codes exactly +-max included);
    // 16/32-bit V: near the KV dtype's largest finite value, with kFullRangeHeadroom.
    const DTypeInfo& kv = dtype_info(s.cache.kv_dtype);
    const double top = kv.fp8 ? 1.0 : kv.max_finite * detail::kFullRangeHeadroom;
    return detail::full_range_value(h, top, symmetric(h), 0.0);
  }
  return symmetric(h);
}

/// The first block no sequence reads (every element poison), or kUnusedTableEntry.
int32_t unread_block(const AttentionSpec& s) {
  std::vector<bool> read(static_cast<std::size_t>(s.num_blocks), false);
  for (int32_t e : s.block_table) {
    if (e >= 0) read[e] = true;
  }
  for (int64_t b = 0; b < s.num_blocks; ++b) {
    if (!read[b]) return static_cast<int32_t>(b);
  }
  return kUnusedTableEntry;
}

/// Per KV head of one cache tensor: the multiplier M of the regime's values and the factor
/// M / scale that turns them into what the cache stores (fp8_scales.h; 1 and 1 otherwise).
struct HeadScaling {
  std::vector<double> multiplier;
  std::vector<double> stored;
};

HeadScaling head_scaling(const AttentionSpec& s, bool key) {
  HeadScaling out;
  const bool fp8 = dtype_info(s.cache.kv_dtype).fp8;
  const std::vector<float>& scales = key ? s.cache.k_scale : s.cache.v_scale;
  const double nominal =
      detail::nominal_scale(detail::attention_magnitude(s, key), s.cache.kv_dtype);
  for (int64_t h = 0; h < s.num_kv_heads; ++h) {
    const double scale = detail::scale_at(scales, h);
    const double m = fp8 ? detail::content_multiplier(static_cast<float>(scale), nominal) : 1.0;
    out.multiplier.push_back(m);
    out.stored.push_back(fp8 ? m / scale : 1.0);
  }
  return out;
}

ref::RaggedBatch batch_of(const AttentionSpec& s) {
  ref::RaggedBatch b;
  b.num_seqs = s.num_seqs;
  if (!s.query_lens.empty()) {
    b.query_start.assign(1, 0);
    for (int32_t n : s.query_lens) b.query_start.push_back(b.query_start.back() + n);
  }
  b.context_lens = s.context_lens;
  b.max_blocks_per_seq = s.max_blocks_per_seq;
  b.block_table = s.block_table;
  for (int32_t& e : b.block_table) {
    if (e < 0) e = kUnusedTableEntry;
  }
  // Padded table rows point at a block no sequence reads (all poison), so a kernel that takes
  // the table width as its row stride reads NaN; without such a block, outside the pool.
  // (0 = the plain stride / the exact bound, as before either existed.)
  b.block_table_stride = s.table_pad > 0 ? table_stride(s) : 0;
  b.block_table_padding = unread_block(s);
  b.context_len_bound = s.bound_pad > 0 ? context_bound(s) : 0;
  return b;
}

ref::AttentionFeatures features_of(const AttentionSpec& s) {
  ref::AttentionFeatures f;
  if (s.alibi) {
    f.alibi_slopes.resize(s.num_heads);
    for (int64_t h = 0; h < s.num_heads; ++h) {
      f.alibi_slopes[h] = static_cast<float>(
          std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(s.num_heads)));
    }
  }
  f.sinks = s.sinks;
  f.window = s.window;
  f.soft_cap = s.soft_cap;
  f.causal = s.causal;
  return f;
}

}  // namespace

namespace detail {

double attention_magnitude(const AttentionSpec& s, bool key) {
  switch (s.regime) {
    case Regime::kPeaked:
    case Regime::kFullRange:   // peaked keys; an fp8 V's largest code stands for 1
      return key ? 9.2 : 1.0;  // beta < 9 along a unit direction, plus 0.2 noise
    case Regime::kMixed:
      return key ? std::pow(10.0, 0.5) : std::pow(10.0, 1.2);
    case Regime::kExtreme: {
      if (!key) return 1.0;
      const double big_dims = static_cast<double>((s.head_size + 1) / 2);
      return std::max(kExtremeOrdinary,
                      kExtremeLevel / (static_cast<double>(s.scale) * kExtremeQuery * big_dims));
    }
    default:
      return 1.0;
  }
}

}  // namespace detail

std::vector<bool> readable_slots(const AttentionSpec& s) {
  std::vector<bool> readable(static_cast<std::size_t>(s.num_blocks * s.block_size), false);
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    for (int64_t t = 0; t < s.context_lens[q]; ++t) {
      const int64_t block = s.block_table[q * s.max_blocks_per_seq + t / s.block_size];
      readable[block * s.block_size + t % s.block_size] = true;
    }
  }
  return readable;
}

ref::PagedAttentionProblem materialize(const AttentionSpec& s) {
  validate(s);
  ref::PagedAttentionProblem p;
  p.dtype = s.dtype;
  p.num_heads = s.num_heads;
  p.scale = s.scale;
  p.query_layout = query_layout(s);
  p.cache = cache_layout(s);
  p.batch = batch_of(s);
  p.features = features_of(s);
  p.k_scale = s.cache.k_scale;
  p.v_scale = s.cache.v_scale;
  const DType kv = s.cache.kv_dtype;
  p.query =
      detail::poisoned_buffer(s.dtype, p.query_layout.span(), dtype_info(s.dtype).poison_bits);
  p.key_cache = detail::poisoned_buffer(kv, p.cache.key_span(), dtype_info(kv).poison_bits);
  p.value_cache = detail::poisoned_buffer(kv, p.cache.value_span(), dtype_info(kv).poison_bits);
  std::vector<std::byte>& value_buffer = p.cache.combined ? p.key_cache : p.value_cache;
  const HeadScaling k_scaling = head_scaling(s, true), v_scaling = head_scaling(s, false);

  // Each readable cache slot is written once, by the first sequence that reads it, so shared
  // blocks hold one consistent token; every other element keeps its poison.
  const int64_t group = s.num_heads / s.num_kv_heads;
  const int64_t bs = s.block_size, hs = s.head_size;
  std::vector<bool> written(static_cast<std::size_t>(s.num_blocks * bs), false);
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    std::vector<PeakPlan> plans;
    for (int64_t kv_head = 0; kv_head < s.num_kv_heads; ++kv_head) {
      plans.push_back(make_plan(s, q, kv_head));
    }
    const int64_t first_row = p.batch.query_begin(q);
    for (int64_t row = 0; row < query_len(s, q); ++row) {
      for (int64_t head = 0; head < s.num_heads; ++head) {
        const double divisor = k_scaling.multiplier[head / group];
        for (int64_t d = 0; d < hs; ++d) {
          store_element(s.dtype, p.query.data(), p.query_layout.offset(first_row + row, head, d),
                        query_value(s, plans[head / group], q, row, head, d) / divisor);
        }
      }
    }
    for (int64_t t = 0; t < s.context_lens[q]; ++t) {
      const int64_t block = s.block_table[q * s.max_blocks_per_seq + t / bs];
      const int64_t slot = t % bs;
      if (written[block * bs + slot]) continue;
      written[block * bs + slot] = true;
      for (int64_t kv_head = 0; kv_head < s.num_kv_heads; ++kv_head) {
        for (int64_t d = 0; d < hs; ++d) {
          store_element(kv, p.key_cache.data(), p.cache.key_at(block, kv_head, slot, d),
                        key_value(s, plans[kv_head], q, t, kv_head, d) * k_scaling.stored[kv_head]);
          store_element(kv, value_buffer.data(), p.cache.value_at(block, kv_head, slot, d),
                        value_value(s, q, t, kv_head, d) * v_scaling.stored[kv_head]);
        }
      }
    }
  }
  p.validate();
  return p;
}

}  // namespace pagecheck::verify::gen
