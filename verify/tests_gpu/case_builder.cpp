/// Seeded problem builders of the GPU tests.
#include "case_builder.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace pagecheck::gpu_test {
namespace {

/// Uniform magnitude in [0.05, 1] * scale with a random sign: mixed sign, never zero.
double nonzero(std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> mag(0.05, 1.0);
  std::bernoulli_distribution neg(0.5);
  return (neg(rng) ? -1.0 : 1.0) * mag(rng) * scale;
}

ref::PagedCacheLayout cache_layout(DType dtype, int64_t num_blocks, int64_t kv_heads,
                                   int64_t head_size, int64_t block_size, bool padded) {
  ref::PagedCacheLayout l =
      ref::PagedCacheLayout::packed(dtype, num_blocks, kv_heads, head_size, block_size);
  if (!padded) return l;
  const int64_t x = l.x;
  l.key_stride_slot = x;
  l.key_stride_group = block_size * x + x;
  l.key_stride_head = (head_size / x) * l.key_stride_group + 2 * x;
  l.key_stride_block = kv_heads * l.key_stride_head + 3 * x;
  l.value_stride_dim = block_size + x;
  l.value_stride_head = head_size * l.value_stride_dim + x;
  l.value_stride_block = kv_heads * l.value_stride_head + 2 * x;
  return l;
}

/// A buffer of `elements` elements, every byte 0xFF (NaN in every dtype).
std::vector<std::byte> nan_buffer(int64_t elements, DType dtype) {
  return std::vector<std::byte>(static_cast<std::size_t>(elements) * dtype_size(dtype),
                                std::byte{0xFF});
}

ref::TokenLayout token_layout(int64_t tokens, int64_t heads, int64_t head_size, int64_t x,
                              bool strided) {
  ref::TokenLayout l = ref::TokenLayout::packed(tokens, heads, head_size);
  if (strided) {
    l.stride_head = head_size + x;
    l.stride_token = heads * l.stride_head + 2 * x;
  }
  return l;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const AttentionCase& c) {
  os << c.name << " {" << dtype_name(c.dtype) << " head " << c.head_size << " block "
     << c.block_size << " heads " << c.num_heads << "/" << c.num_kv_heads << " ctx [";
  for (std::size_t i = 0; i < c.context_lens.size(); ++i) os << (i ? "," : "") << c.context_lens[i];
  return os << "]" << (c.alibi ? " alibi" : "") << (c.padded_cache ? " padded" : "")
            << (c.strided_query ? " strided_q" : "") << (c.strided_out ? " strided_out" : "")
            << (c.peaked ? " peaked" : " flat") << " seed " << c.seed << "}";
}

std::ostream& operator<<(std::ostream& os, const CopyCase& c) {
  return os << c.name << " {" << dtype_name(c.dtype) << " head " << c.head_size << " block "
            << c.block_size << " kv_heads " << c.num_kv_heads << " tokens " << c.num_tokens
            << " blocks " << c.num_blocks << (c.padded_cache ? " padded" : "")
            << (c.strided_tokens ? " strided" : "") << " seed " << c.seed << "}";
}

ref::PagedAttentionProblem build_attention_problem(const AttentionCase& c) {
  std::mt19937_64 rng(c.seed);
  ref::PagedAttentionProblem p;
  p.dtype = c.dtype;
  p.num_seqs = static_cast<int64_t>(c.context_lens.size());
  p.num_heads = c.num_heads;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_size)));
  const int64_t bs = c.block_size;
  std::vector<int64_t> blocks_needed;
  int64_t total = 0;
  for (int32_t len : c.context_lens) {
    blocks_needed.push_back((len + bs - 1) / bs);
    total += blocks_needed.back();
  }
  p.max_blocks_per_seq = *std::max_element(blocks_needed.begin(), blocks_needed.end()) + 1;
  const int64_t pool = std::max(total + c.extra_blocks, c.min_pool_blocks);
  const int64_t x = dtype_x(c.dtype);
  p.cache = cache_layout(c.dtype, pool, c.num_kv_heads, c.head_size, bs, c.padded_cache);

  // Block table: distinct physical blocks in random order; poison past each row's last block.
  std::vector<int32_t> ids(static_cast<std::size_t>(total));
  std::iota(ids.begin(), ids.end(), static_cast<int32_t>(c.high_blocks ? pool - total : 0));
  std::shuffle(ids.begin(), ids.end(), rng);
  p.block_table.assign(static_cast<std::size_t>(p.num_seqs * p.max_blocks_per_seq),
                       static_cast<int32_t>(pool + 1000));
  std::size_t next = 0;
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t b = 0; b < blocks_needed[s]; ++b) {
      p.block_table[s * p.max_blocks_per_seq + b] = ids[next++];
    }
  }
  if (c.shared_prefix && p.num_seqs > 1 && c.context_lens[0] >= bs && c.context_lens[1] >= bs) {
    p.block_table[p.max_blocks_per_seq] = p.block_table[0];  // seq 1 shares seq 0's first block
  }
  p.context_lens = c.context_lens;

  // Query (optionally a slice of a fused QKV tensor: stride_token = 3 * heads * head_size).
  p.query_layout = ref::TokenLayout::packed(p.num_seqs, c.num_heads, c.head_size);
  if (c.strided_query) {
    p.query_layout.stride_head = c.head_size + x;
    p.query_layout.stride_token = 3 * c.num_heads * p.query_layout.stride_head;
  }
  const double qk_scale = c.peaked ? 2.0 : 1.0;
  p.query = nan_buffer(p.query_layout.span(), c.dtype);
  for (int64_t s = 0; s < p.num_seqs; ++s)
    for (int64_t h = 0; h < c.num_heads; ++h)
      for (int64_t d = 0; d < c.head_size; ++d)
        store_element(c.dtype, p.query.data(), p.query_layout.offset(s, h, d),
                      nonzero(rng, qk_scale));

  // Caches: NaN everywhere, random values in the slots some sequence reads.
  p.key_cache = nan_buffer(p.cache.key_span(), c.dtype);
  p.value_cache = nan_buffer(p.cache.value_span(), c.dtype);
  const int64_t group = c.num_heads / c.num_kv_heads;
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    // Peaked: one key per sequence and kv head aligned with the query of its first head.
    std::uniform_int_distribution<int64_t> pick(0, c.context_lens[s] - 1);
    const int64_t needle = pick(rng);
    for (int64_t t = 0; t < c.context_lens[s]; ++t) {
      const int64_t block = p.block_table[s * p.max_blocks_per_seq + t / bs];
      const int64_t slot = t % bs;
      for (int64_t h = 0; h < c.num_kv_heads; ++h) {
        for (int64_t d = 0; d < c.head_size; ++d) {
          double k = nonzero(rng, qk_scale);
          if (c.peaked && t == needle) {
            k = 0.5 * load_element(c.dtype, p.query.data(), p.query_layout.offset(s, h * group, d));
          }
          store_element(c.dtype, p.key_cache.data(), p.cache.key_offset(block, h, d, slot), k);
          store_element(c.dtype, p.value_cache.data(), p.cache.value_offset(block, h, d, slot),
                        nonzero(rng, 1.0));
        }
      }
    }
  }
  if (c.alibi) {
    for (int64_t h = 0; h < c.num_heads; ++h) {
      p.alibi_slopes.push_back(static_cast<float>(std::exp2(-8.0 * (h + 1) / c.num_heads)));
    }
  }
  return p;
}

std::optional<ref::TokenLayout> attention_out_layout(const AttentionCase& c) {
  if (!c.strided_out) return std::nullopt;
  return token_layout(static_cast<int64_t>(c.context_lens.size()), c.num_heads, c.head_size,
                      dtype_x(c.dtype) / 2 + 1, true);
}

double max_abs_value(const ref::PagedAttentionProblem& p) {
  double m = 0;
  const int64_t n = static_cast<int64_t>(p.value_cache.size() / dtype_size(p.dtype));
  for (int64_t i = 0; i < n; ++i) {
    const double v = load_element(p.dtype, p.value_cache.data(), i);
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  }
  return m;
}

namespace {

/// Layouts and slot mapping shared by gather and reshape problems.
ref::CacheCopyProblem copy_skeleton(const CopyCase& c, std::mt19937_64& rng) {
  ref::CacheCopyProblem p;
  p.dtype = c.dtype;
  const int64_t x = dtype_x(c.dtype);
  p.cache = cache_layout(c.dtype, c.num_blocks, c.num_kv_heads, c.head_size, c.block_size,
                         c.padded_cache);
  p.key_layout = token_layout(c.num_tokens, c.num_kv_heads, c.head_size, x, c.strided_tokens);
  p.value_layout = token_layout(c.num_tokens, c.num_kv_heads, c.head_size, x, c.strided_tokens);
  if (c.strided_tokens) p.value_layout.stride_token += x;  // differ from the key rows
  // Distinct slots in random order (from the last blocks when high_slots), some -1.
  const int64_t slots = c.num_blocks * c.block_size;
  const int64_t window = std::min<int64_t>(slots, std::max<int64_t>(4 * c.num_tokens, 64));
  std::vector<int64_t> pool(static_cast<std::size_t>(window));
  std::iota(pool.begin(), pool.end(), c.high_slots ? slots - window : 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  p.slot_mapping.resize(static_cast<std::size_t>(c.num_tokens));
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    p.slot_mapping[t] = (c.skip_every > 0 && t % c.skip_every == c.skip_every - 1) ? -1 : pool[t];
  }
  return p;
}

}  // namespace

ref::CacheCopyProblem build_gather_problem(const CopyCase& c) {
  std::mt19937_64 rng(c.seed);
  ref::CacheCopyProblem p = copy_skeleton(c, rng);
  p.key_cache = nan_buffer(p.cache.key_span(), c.dtype);
  p.value_cache = nan_buffer(p.cache.value_span(), c.dtype);
  for (int64_t slot : p.slot_mapping) {
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size;
    const int64_t off = slot % c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        store_element(c.dtype, p.key_cache.data(), p.cache.key_offset(block, h, d, off),
                      nonzero(rng, 1.0));
        store_element(c.dtype, p.value_cache.data(), p.cache.value_offset(block, h, d, off),
                      nonzero(rng, 1.0));
      }
    }
  }
  p.key = nan_buffer(p.key_layout.span(), c.dtype);
  p.value = nan_buffer(p.value_layout.span(), c.dtype);
  return p;
}

ref::CacheCopyProblem build_reshape_problem(const CopyCase& c) {
  std::mt19937_64 rng(c.seed);
  ref::CacheCopyProblem p = copy_skeleton(c, rng);
  p.key = nan_buffer(p.key_layout.span(), c.dtype);
  p.value = nan_buffer(p.value_layout.span(), c.dtype);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        store_element(c.dtype, p.key.data(), p.key_layout.offset(t, h, d), nonzero(rng, 1.0));
        store_element(c.dtype, p.value.data(), p.value_layout.offset(t, h, d), nonzero(rng, 1.0));
      }
    }
  }
  p.key_cache = nan_buffer(p.cache.key_span(), c.dtype);
  p.value_cache = nan_buffer(p.cache.value_span(), c.dtype);
  return p;
}

}  // namespace pagecheck::gpu_test
