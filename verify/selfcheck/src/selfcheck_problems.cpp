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

}  // namespace

void fill_nan(DType dtype, std::vector<std::byte>& buffer) {
  const int64_t elements = static_cast<int64_t>(buffer.size() / dtype_size(dtype));
  for (int64_t i = 0; i < elements; ++i) store_element(dtype, buffer.data(), i, kNaN);
}

ref::PagedCacheLayout padded_cache_layout(DType dtype, int64_t num_blocks, int64_t num_kv_heads,
                                          int64_t head_size, int64_t block_size, int64_t pad) {
  ref::PagedCacheLayout c =
      ref::PagedCacheLayout::packed(dtype, num_blocks, num_kv_heads, head_size, block_size);
  if (pad == 0) return c;
  c.key_stride_slot = c.x + pad;
  c.key_stride_group = block_size * c.key_stride_slot + pad;
  c.key_stride_head = (head_size / c.x) * c.key_stride_group + pad;
  c.key_stride_block = num_kv_heads * c.key_stride_head + pad;
  c.value_stride_dim = block_size + pad;
  c.value_stride_head = head_size * c.value_stride_dim + pad;
  c.value_stride_block = num_kv_heads * c.value_stride_head + pad;
  return c;
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
  s << "]" << (alibi ? " alibi" : "") << (share_prefix ? " shared" : "");
  if (query_pad || cache_pad) s << " pad q" << query_pad << " c" << cache_pad;
  s << " spread " << spread;
  return s.str();
}

ref::PagedAttentionProblem make_attention_problem(const AttentionSpec& spec) {
  if (spec.context_lens.empty()) {
    throw std::invalid_argument("AttentionSpec: context_lens is empty");
  }
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> qk(0.0, spec.spread), v(0.0, 1.0);
  ref::PagedAttentionProblem p;
  p.dtype = spec.dtype;
  p.num_seqs = static_cast<int64_t>(spec.context_lens.size());
  p.num_heads = spec.num_heads;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.head_size)));
  p.context_lens = spec.context_lens;
  const int64_t bs = spec.block_size;
  std::vector<int64_t> used(p.num_seqs);
  for (int64_t s = 0; s < p.num_seqs; ++s) used[s] = (p.context_lens[s] + bs - 1) / bs;
  p.max_blocks_per_seq = *std::max_element(used.begin(), used.end()) + spec.extra_table_cols;

  // Logical blocks -> physical ids: sequence s > 0 may share a prefix with sequence 0.
  std::vector<std::vector<int64_t>> logical(p.num_seqs);
  int64_t distinct = 0;
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const int64_t shared = spec.share_prefix && s > 0 ? (std::min(used[0], used[s]) + 1) / 2 : 0;
    for (int64_t b = 0; b < used[s]; ++b) {
      logical[s].push_back(b < shared ? logical[0][b] : distinct++);
    }
  }
  const int64_t num_blocks = distinct + spec.extra_blocks;
  std::vector<int64_t> physical(num_blocks);
  std::iota(physical.begin(), physical.end(), 0);
  std::shuffle(physical.begin(), physical.end(), rng);
  p.block_table.assign(p.num_seqs * p.max_blocks_per_seq, 0);
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t b = 0; b < p.max_blocks_per_seq; ++b) {
      p.block_table[s * p.max_blocks_per_seq + b] =
          b < used[s] ? static_cast<int32_t>(physical[logical[s][b]])
                      : poison_block(rng, num_blocks);
    }
  }

  p.cache = padded_cache_layout(spec.dtype, num_blocks, spec.num_kv_heads, spec.head_size, bs,
                                spec.cache_pad);
  p.query_layout = padded_token_layout(p.num_seqs, p.num_heads, spec.head_size, spec.query_pad);
  p.query = nan_buffer(spec.dtype, p.query_layout.span());
  p.key_cache = nan_buffer(spec.dtype, p.cache.key_span());
  p.value_cache = nan_buffer(spec.dtype, p.cache.value_span());
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      for (int64_t d = 0; d < spec.head_size; ++d) {
        store_element(spec.dtype, p.query.data(), p.query_layout.offset(s, h, d), qk(rng));
      }
    }
    for (int64_t t = 0; t < p.context_lens[s]; ++t) {
      const int64_t block = p.block_table[s * p.max_blocks_per_seq + t / bs];
      for (int64_t h = 0; h < spec.num_kv_heads; ++h) {
        for (int64_t d = 0; d < spec.head_size; ++d) {
          store_element(spec.dtype, p.key_cache.data(), p.cache.key_offset(block, h, d, t % bs),
                        qk(rng));
          store_element(spec.dtype, p.value_cache.data(), p.cache.value_offset(block, h, d, t % bs),
                        v(rng));
        }
      }
    }
  }
  if (spec.alibi) {
    // Geometric slopes 2^(-8 (h + 1) / num_heads), the usual ALiBi choice.
    for (int64_t h = 0; h < p.num_heads; ++h) {
      p.alibi_slopes.push_back(static_cast<float>(
          std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(p.num_heads))));
    }
  }
  return p;
}

std::string CopySpec::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " h" << head_size << " b" << block_size << " kv " << num_kv_heads
    << " blocks " << num_blocks << " tokens " << num_tokens << " skip " << skip_fraction;
  if (token_pad || cache_pad) s << " pad t" << token_pad << " c" << cache_pad;
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
  p.cache = padded_cache_layout(spec.dtype, spec.num_blocks, spec.num_kv_heads, spec.head_size,
                                spec.block_size, spec.cache_pad);
  p.key_layout =
      padded_token_layout(spec.num_tokens, spec.num_kv_heads, spec.head_size, spec.token_pad);
  p.value_layout = p.key_layout;
  std::vector<int64_t> slots(num_slots);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  for (int64_t t = 0; t < spec.num_tokens; ++t) {
    p.slot_mapping.push_back(skip(rng) ? -1 : slots[t]);
  }
  p.key_cache = nan_buffer(spec.dtype, p.cache.key_span());
  p.value_cache = nan_buffer(spec.dtype, p.cache.value_span());
  p.key = nan_buffer(spec.dtype, p.key_layout.span());
  p.value = nan_buffer(spec.dtype, p.value_layout.span());
  for (int64_t b = 0; b < spec.num_blocks; ++b) {
    for (int64_t h = 0; h < spec.num_kv_heads; ++h) {
      for (int64_t d = 0; d < spec.head_size; ++d) {
        for (int64_t slot = 0; slot < spec.block_size; ++slot) {
          store_element(spec.dtype, p.key_cache.data(), p.cache.key_offset(b, h, d, slot),
                        value(rng));
          store_element(spec.dtype, p.value_cache.data(), p.cache.value_offset(b, h, d, slot),
                        value(rng));
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
