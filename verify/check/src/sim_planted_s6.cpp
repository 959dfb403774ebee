/// CPU simulations of the planted bug classes of issue 13 §6 (sim_planted_s6.h).
#include "sim_planted_s6.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::verify::check {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Element `index` of `to` set back to its bytes in `from` (both buffers of `dtype`).
void restore(DType dtype, const std::vector<std::byte>& from, std::vector<std::byte>& to,
             int64_t index) {
  const std::size_t size = dtype_size(dtype);
  std::memcpy(to.data() + index * size, from.data() + index * size, size);
}

/// Elements of a token's row (all kv heads, head-major) the capped copy writes.
int64_t copied_elements(DType dtype, const ref::PagedCacheLayout& c) {
  return std::min(c.num_kv_heads * c.head_size, kSimOneBlockVectors * dtype_x(dtype));
}

/// Every output element of the query rows of sequence `seq` set to NaN.
void nan_sequence(const ref::PagedAttentionProblem& p, int64_t seq, std::vector<double>& out) {
  const int64_t row = p.num_heads * p.head_size();
  const auto begin = out.begin() + p.batch.query_begin(seq) * row;
  std::fill(begin, begin + p.batch.query_len(seq) * row, kNaN);
}

std::vector<double> reference_out(const ref::PagedAttentionProblem& p) {
  return ref::paged_attention(p, {1}).out;
}

}  // namespace

void sim_gather_one_block_per_token(ref::CacheCopyProblem& p) {
  const std::vector<std::byte> key = p.key, value = p.value;  // as the harness filled them
  ref::gather_cached_kv(p);
  const int64_t hs = p.cache.head_size, all = p.cache.num_kv_heads * hs;
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    if (p.slot_mapping[t] < 0) continue;
    for (int64_t e = copied_elements(p.dtype, p.cache); e < all; ++e) {
      restore(p.dtype, key, p.key, p.key_layout.offset(t, e / hs, e % hs));
      restore(p.dtype, value, p.value, p.value_layout.offset(t, e / hs, e % hs));
    }
  }
}

void sim_reshape_one_block_per_token(ref::CacheCopyProblem& p) {
  const std::vector<std::byte> key_cache = p.key_cache, value_cache = p.value_cache;
  ref::reshape_and_cache(p);
  const ref::PagedCacheLayout& c = p.cache;
  std::vector<std::byte>& values = c.combined ? p.key_cache : p.value_cache;
  const std::vector<std::byte>& old_values = c.combined ? key_cache : value_cache;
  const int64_t hs = c.head_size, all = c.num_kv_heads * hs;
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot % c.block_size;
    for (int64_t e = copied_elements(p.dtype, c); e < all; ++e) {
      restore(c.dtype, key_cache, p.key_cache, c.key_at(block, e / hs, offset, e % hs));
      restore(c.dtype, old_values, values, c.value_at(block, e / hs, offset, e % hs));
    }
  }
}

std::vector<double> sim_table_stride_from_width(const ref::PagedAttentionProblem& p) {
  const ref::RaggedBatch& b = p.batch;
  const std::vector<int32_t> strided = b.strided_block_table();
  const int64_t width = b.max_blocks_per_seq;
  ref::PagedAttentionProblem q = p;
  std::vector<bool> outside(b.num_seqs, false);
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    const int64_t used = (b.context_lens[s] + p.block_size() - 1) / p.block_size();
    for (int64_t j = 0; j < width; ++j) {
      int32_t e = strided[s * width + j];
      if (j < used && (e < 0 || e >= p.cache.num_blocks)) {
        outside[s] = true;  // a fault or garbage on a GPU
        e = 0;
      }
      q.batch.block_table[s * width + j] = e;
    }
  }
  std::vector<double> out = reference_out(q);
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    if (outside[s]) nan_sequence(p, s, out);
  }
  return out;
}

std::vector<double> sim_finite_mask_sentinel(const ref::PagedAttentionProblem& p) {
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  std::vector<double> out = r.out;
  const int64_t bs = p.block_size(), hs = p.head_size();
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    const int64_t ctx = p.batch.context_lens[s];
    const int64_t masked = (ctx + bs - 1) / bs * bs - ctx;
    if (ctx == 0 || masked == 0) continue;
    for (int64_t row = p.batch.query_begin(s); row < p.batch.query_begin(s) + p.batch.query_len(s);
         ++row) {
      for (int64_t h = 0; h < p.num_heads; ++h) {
        const double lse = r.lse[row * p.num_heads + h];
        const double factor =
            1.0 / (1.0 + static_cast<double>(masked) * std::exp(kSimMaskSentinel - lse));
        const auto first = out.begin() + (row * p.num_heads + h) * hs;
        std::transform(first, first + hs, first, [factor](double v) { return v * factor; });
      }
    }
  }
  return out;
}

std::vector<double> sim_partitions_from_bound(const ref::PagedAttentionProblem& p,
                                              int64_t partition) {
  std::vector<double> out = reference_out(p);
  const int64_t bound_parts = (p.batch.host_max_context_len() + partition - 1) / partition;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    const int64_t ctx = p.batch.context_lens[s];
    if (ctx > 0 && (ctx + partition - 1) / partition < bound_parts) nan_sequence(p, s, out);
  }
  return out;
}

std::vector<double> sim_gqa_group_le8(const ref::PagedAttentionProblem& p) {
  std::vector<double> out = reference_out(p);
  const int64_t group = p.num_heads / p.num_kv_heads(), hs = p.head_size();
  for (int64_t row = 0; row < p.batch.num_query_tokens(); ++row) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      if (h % group < kSimGqaSlots) continue;
      const auto first = out.begin() + (row * p.num_heads + h) * hs;
      std::fill(first, first + hs, kNaN);
    }
  }
  return out;
}

}  // namespace pagecheck::verify::check
