/// Builders of small, poisoned test problems for the reference self-check and tests.
#include "pagecheck/verify/selfcheck_problems.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace pagecheck::verify {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::byte> nan_buffer(DType dtype, int64_t elements) {
  std::vector<std::byte> buffer(elements * dtype_size(dtype));
  fill_nan(dtype, buffer);
  return buffer;
}

/// Values a block-table entry past a sequence's last block may hold: never a valid block.
int32_t poison_block(std::mt19937_64& rng, int64_t num_blocks) {
  switch (rng() % 4) {
    case 0:
      return -1;
    case 1:
      return static_cast<int32_t>(num_blocks);
    case 2:
      return std::numeric_limits<int32_t>::max();
    default:
      return std::numeric_limits<int32_t>::min();
  }
}

/// fp8 scales for `scale_kind`: (1 + k / 256) * 2^e with k in [0, 256) and e in [-4, 2], so a
/// scale has at most 9 significant bits and code * scale at most 13 (exact in float32).
std::vector<float> draw_scales(std::mt19937_64& rng, ref::ScaleKind kind, int64_t num_kv_heads) {
  const int64_t count = ref::scale_count(kind, num_kv_heads);
  std::vector<float> scales;
  for (int64_t i = 0; i < count; ++i) {
    const double k = static_cast<double>(rng() % 256), e = static_cast<double>(rng() % 7) - 4;
    scales.push_back(static_cast<float>((1 + k / 256) * std::exp2(e)));
  }
  return scales;
}

/// The scale kv head `head` divides its values by before they are stored (1 without scales).
double scale_of(const std::vector<float>& scales, int64_t head) {
  if (scales.empty()) return 1.0;
  return scales[scales.size() == 1 ? 0 : head];
}

/// The cache of a spec through the one builder.
template <typename Spec>
ref::PagedCacheLayout spec_cache(const Spec& spec, int64_t num_blocks) {
  return ref::make_cache_layout(
      spec.kind, spec.kv_dtype(), {num_blocks, spec.num_kv_heads, spec.head_size, spec.block_size},
      uniform_cache_padding(spec.cache_pad), spec.combined, spec.scale_kind);
}

/// " nhd kv fp8_e4m3 per_tensor combined" for whatever differs from an x-split cache of the
/// query dtype.
template <typename Spec>
std::string describe_cache(const Spec& spec) {
  std::string s;
  if (spec.kind != ref::CacheKind::kXSplit) s += std::string(" ") + ref::cache_kind_name(spec.kind);
  if (spec.kv_dtype() != spec.dtype) s += std::string(" kv ") + dtype_name(spec.kv_dtype());
  if (spec.scale_kind != ref::ScaleKind::kNone) {
    s += std::string(" ") + ref::scale_kind_name(spec.scale_kind);
  }
  if (spec.combined) s += " combined";
  return s;
}

/// Writes the dequantized `key` / `value` of (block, head, slot, dim): the code of value /
/// scale for an fp8 cache, the rounded value otherwise.
void store_kv(const ref::PagedCacheLayout& c, std::vector<std::byte>& key_cache,
              std::vector<std::byte>& value_cache, const std::vector<float>& k_scale,
              const std::vector<float>& v_scale, int64_t block, int64_t head, int64_t slot,
              int64_t dim, double key, double value) {
  std::vector<std::byte>& values = c.combined ? key_cache : value_cache;
  store_element(c.dtype, key_cache.data(), c.key_at(block, head, slot, dim),
                key / scale_of(k_scale, head));
  store_element(c.dtype, values.data(), c.value_at(block, head, slot, dim),
                value / scale_of(v_scale, head));
}

}  // namespace

void fill_nan(DType dtype, std::vector<std::byte>& buffer) {
  const int64_t elements = static_cast<int64_t>(buffer.size() / dtype_size(dtype));
  for (int64_t i = 0; i < elements; ++i) store_element(dtype, buffer.data(), i, kNaN);
}

ref::CachePadding uniform_cache_padding(int64_t pad) {
  const ref::TensorPadding tensor{pad, pad, pad};
  return {tensor, tensor};
}

ref::TokenLayout padded_token_layout(int64_t num_tokens, int64_t num_heads, int64_t head_size,
                                     int64_t pad) {
  ref::TokenLayout l = ref::TokenLayout::packed(num_tokens, num_heads, head_size);
  l.stride_head = head_size + pad;
  l.stride_token = num_heads * l.stride_head + pad;
  return l;
}

std::string AttentionSpec::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " h" << head_size << " b" << block_size << " heads " << num_heads << "/"
    << num_kv_heads << " ctx [";
  for (std::size_t i = 0; i < context_lens.size(); ++i) s << (i ? "," : "") << context_lens[i];
  s << "]";
  if (!query_lens.empty()) {
    s << " q [";
    for (std::size_t i = 0; i < query_lens.size(); ++i) s << (i ? "," : "") << query_lens[i];
    s << "]";
  }
  s << (alibi ? " alibi" : "") << (sinks ? " sinks" : "");
  if (window > 0) s << " window " << window;
  if (soft_cap > 0) s << " cap " << soft_cap;
  s << (causal ? "" : " noncausal") << (share_prefix ? " shared" : "");
  if (query_pad || cache_pad) s << " pad q" << query_pad << " c" << cache_pad;
  s << describe_cache(*this) << " spread " << spread;
  return s.str();
}

ref::PagedAttentionProblem make_attention_problem(const AttentionSpec& spec) {
  if (spec.context_lens.empty()) {
    throw std::invalid_argument("AttentionSpec: context_lens is empty");
  }
  if (!spec.query_lens.empty() && spec.query_lens.size() != spec.context_lens.size()) {
    throw std::invalid_argument("AttentionSpec: query_lens has " +
                                std::to_string(spec.query_lens.size()) + " entries for " +
                                std::to_string(spec.context_lens.size()) + " sequences");
  }
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> qk(0.0, spec.spread), v(0.0, 1.0);
  ref::PagedAttentionProblem p;
  p.dtype = spec.dtype;
  p.num_heads = spec.num_heads;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.head_size)));
  ref::RaggedBatch& batch = p.batch;
  batch.num_seqs = static_cast<int64_t>(spec.context_lens.size());
  batch.context_lens = spec.context_lens;
  if (!spec.query_lens.empty()) {
    batch.query_start.assign(1, 0);
    for (int32_t len : spec.query_lens) batch.query_start.push_back(batch.query_start.back() + len);
  }
  const int64_t bs = spec.block_size, num_seqs = batch.num_seqs;
  std::vector<int64_t> used(num_seqs);
  for (int64_t s = 0; s < num_seqs; ++s) used[s] = (batch.context_lens[s] + bs - 1) / bs;
  batch.max_blocks_per_seq =
      std::max<int64_t>(1, *std::max_element(used.begin(), used.end()) + spec.extra_table_cols);

  // Logical blocks -> physical ids: sequence s > 0 may share a prefix with sequence 0.
  std::vector<std::vector<int64_t>> logical(num_seqs);
  int64_t distinct = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t shared = spec.share_prefix && s > 0 ? (std::min(used[0], used[s]) + 1) / 2 : 0;
    for (int64_t b = 0; b < used[s]; ++b) {
      logical[s].push_back(b < shared ? logical[0][b] : distinct++);
    }
  }
  const int64_t num_blocks = std::max<int64_t>(1, distinct + spec.extra_blocks);
  std::vector<int64_t> physical(num_blocks);
  std::iota(physical.begin(), physical.end(), 0);
  std::shuffle(physical.begin(), physical.end(), rng);
  const int64_t cols = batch.max_blocks_per_seq;
  batch.block_table.assign(num_seqs * cols, 0);
  for (int64_t s = 0; s < num_seqs; ++s) {
    for (int64_t b = 0; b < cols; ++b) {
      batch.block_table[s * cols + b] = b < used[s] ? static_cast<int32_t>(physical[logical[s][b]])
                                                    : poison_block(rng, num_blocks);
    }
  }

  p.cache = spec_cache(spec, num_blocks);
  p.k_scale = draw_scales(rng, spec.scale_kind, spec.num_kv_heads);
  p.v_scale = draw_scales(rng, spec.scale_kind, spec.num_kv_heads);
  p.query_layout =
      padded_token_layout(batch.num_query_tokens(), p.num_heads, spec.head_size, spec.query_pad);
  p.query = nan_buffer(spec.dtype, p.query_layout.span());
  p.key_cache = nan_buffer(p.cache.dtype, p.cache.key_span());
  p.value_cache = nan_buffer(p.cache.dtype, p.cache.value_span());
  for (int64_t row = 0; row < p.query_layout.num_tokens; ++row) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      for (int64_t d = 0; d < spec.head_size; ++d) {
        store_element(spec.dtype, p.query.data(), p.query_layout.offset(row, h, d), qk(rng));
      }
    }
  }
  for (int64_t s = 0; s < num_seqs; ++s) {
    for (int64_t t = 0; t < batch.context_lens[s]; ++t) {
      const int64_t block = batch.block_table[s * cols + t / bs];
      for (int64_t h = 0; h < spec.num_kv_heads; ++h) {
        for (int64_t d = 0; d < spec.head_size; ++d) {
          const double key = qk(rng), value = v(rng);
          store_kv(p.cache, p.key_cache, p.value_cache, p.k_scale, p.v_scale, block, h, t % bs, d,
                   key, value);
        }
      }
    }
  }
  ref::AttentionFeatures& f = p.features;
  if (spec.alibi) {
    // Geometric slopes 2^(-8 (h + 1) / num_heads), the usual ALiBi choice.
    for (int64_t h = 0; h < p.num_heads; ++h) {
      f.alibi_slopes.push_back(static_cast<float>(
          std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(p.num_heads))));
    }
  }
  if (spec.sinks) {
    std::uniform_real_distribution<double> sink(-3.0, 5.0);
    for (int64_t h = 0; h < p.num_heads; ++h) f.sinks.push_back(static_cast<float>(sink(rng)));
  }
  f.window = spec.window;
  f.soft_cap = spec.soft_cap;
  f.causal = spec.causal;
  return p;
}

std::string CopySpec::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " h" << head_size << " b" << block_size << " kv " << num_kv_heads
    << " blocks " << num_blocks << " tokens " << num_tokens << " skip " << skip_fraction;
  if (token_pad || cache_pad) s << " pad t" << token_pad << " c" << cache_pad;
  s << describe_cache(*this) << (dequantize ? " dequantize" : "");
  return s.str();
}

ref::CacheCopyProblem make_copy_problem(const CopySpec& spec) {
  const int64_t num_slots = spec.num_blocks * spec.block_size;
  if (spec.num_tokens > num_slots) {
    throw std::invalid_argument("CopySpec: num_tokens = " + std::to_string(spec.num_tokens) +
                                " exceeds num_blocks * block_size = " + std::to_string(num_slots));
  }
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> value(0.0, 1.0);
  std::bernoulli_distribution skip(spec.skip_fraction);
  ref::CacheCopyProblem p;
  p.dtype = spec.dtype;
  p.dequantize = spec.dequantize;
  p.cache = spec_cache(spec, spec.num_blocks);
  p.k_scale = draw_scales(rng, spec.scale_kind, spec.num_kv_heads);
  p.v_scale = draw_scales(rng, spec.scale_kind, spec.num_kv_heads);
  p.key_layout =
      padded_token_layout(spec.num_tokens, spec.num_kv_heads, spec.head_size, spec.token_pad);
  p.value_layout = p.key_layout;
  std::vector<int64_t> slots(num_slots);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  for (int64_t t = 0; t < spec.num_tokens; ++t) {
    p.slot_mapping.push_back(skip(rng) ? -1 : slots[t]);
  }
  p.key_cache = nan_buffer(p.cache.dtype, p.cache.key_span());
  p.value_cache = nan_buffer(p.cache.dtype, p.cache.value_span());
  p.key = nan_buffer(spec.dtype, p.key_layout.span());
  p.value = nan_buffer(spec.dtype, p.value_layout.span());
  for (int64_t b = 0; b < spec.num_blocks; ++b) {
    for (int64_t h = 0; h < spec.num_kv_heads; ++h) {
      for (int64_t d = 0; d < spec.head_size; ++d) {
        for (int64_t slot = 0; slot < spec.block_size; ++slot) {
          const double key = value(rng), val = value(rng);
          store_kv(p.cache, p.key_cache, p.value_cache, p.k_scale, p.v_scale, b, h, slot, d, key,
                   val);
        }
      }
    }
  }
  for (int64_t t = 0; t < spec.num_tokens; ++t) {
    for (int64_t h = 0; h < spec.num_kv_heads; ++h) {
      for (int64_t d = 0; d < spec.head_size; ++d) {
        store_element(spec.dtype, p.key.data(), p.key_layout.offset(t, h, d), value(rng));
        store_element(spec.dtype, p.value.data(), p.value_layout.offset(t, h, d), value(rng));
      }
    }
  }
  return p;
}

}  // namespace pagecheck::verify
