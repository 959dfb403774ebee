/// The dense oracle: written separately from the reference, with its own index arithmetic.
#include "pagecheck/verify/dense_oracle.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pagecheck::oracle {
namespace {

using ref::CacheCopyProblem;
using ref::PagedAttentionProblem;

/// Bounds-checked element read (long double, exact).
long double read(DType dtype, const std::vector<std::byte>& buffer, int64_t index,
                 const char* what) {
  const int64_t elements = static_cast<int64_t>(buffer.size() / dtype_size(dtype));
  if (index < 0 || index >= elements) {
    throw std::out_of_range(std::string("oracle: ") + what + " element " + std::to_string(index) +
                            " is outside the buffer of " + std::to_string(elements) + " elements");
  }
  return load_element(dtype, buffer.data(), index);
}

/// Key-cache element index of (block, kv head, dim, slot), from the public strides:
/// key[block][head][dim / x][slot][dim % x].
int64_t key_index(const ref::PagedCacheLayout& c, int64_t block, int64_t head, int64_t dim,
                  int64_t slot) {
  const int64_t group = dim / c.x;
  const int64_t lane = dim - group * c.x;
  return lane + slot * c.key_stride_slot + group * c.key_stride_group + head * c.key_stride_head +
         block * c.key_stride_block;
}

/// Value-cache element index of value[block][head][dim][slot].
int64_t value_index(const ref::PagedCacheLayout& c, int64_t block, int64_t head, int64_t dim,
                    int64_t slot) {
  return slot + dim * c.value_stride_dim + head * c.value_stride_head +
         block * c.value_stride_block;
}

/// Element index of a token tensor [token][head][dim].
int64_t token_index(const ref::TokenLayout& l, int64_t token, int64_t head, int64_t dim) {
  return dim + head * l.stride_head + token * l.stride_token;
}

/// Copies one element's bytes between buffers, bounds-checked on both sides.
void copy_element(std::size_t size, const std::vector<std::byte>& from, int64_t from_index,
                  std::vector<std::byte>& to, int64_t to_index) {
  const int64_t from_end = (from_index + 1) * static_cast<int64_t>(size);
  const int64_t to_end = (to_index + 1) * static_cast<int64_t>(size);
  if (from_index < 0 || to_index < 0 || from_end > static_cast<int64_t>(from.size()) ||
      to_end > static_cast<int64_t>(to.size())) {
    throw std::out_of_range("oracle: copy element outside a buffer (from " +
                            std::to_string(from_index) + ", to " + std::to_string(to_index) + ")");
  }
  std::memcpy(to.data() + to_index * size, from.data() + from_index * size, size);
}

}  // namespace

DenseSequenceKV dense_sequence_kv(const PagedAttentionProblem& p, int64_t seq) {
  const ref::PagedCacheLayout& c = p.cache;
  DenseSequenceKV kv;
  kv.context_len = p.context_lens.at(seq);
  kv.num_kv_heads = c.num_kv_heads;
  kv.head_size = c.head_size;
  kv.key.resize(kv.context_len * c.num_kv_heads * c.head_size);
  kv.value.resize(kv.key.size());
  for (int64_t t = 0; t < kv.context_len; ++t) {
    const int64_t block = p.block_table.at(seq * p.max_blocks_per_seq + t / c.block_size);
    if (block < 0 || block >= c.num_blocks) {
      throw std::out_of_range("oracle: sequence " + std::to_string(seq) + " token " +
                              std::to_string(t) + " maps to block " + std::to_string(block));
    }
    const int64_t slot = t % c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t dense = (t * c.num_kv_heads + h) * c.head_size + d;
        kv.key[dense] = read(p.dtype, p.key_cache, key_index(c, block, h, d, slot), "key_cache");
        kv.value[dense] =
            read(p.dtype, p.value_cache, value_index(c, block, h, d, slot), "value_cache");
      }
    }
  }
  return kv;
}

OracleAttention paged_attention(const PagedAttentionProblem& p) {
  const int64_t hs = p.cache.head_size;
  const int64_t kv_heads = p.cache.num_kv_heads;
  const int64_t queries_per_kv = p.num_heads / kv_heads;
  OracleAttention r;
  r.num_seqs = p.num_seqs;
  r.num_heads = p.num_heads;
  r.head_size = hs;
  r.out.assign(p.num_seqs * p.num_heads * hs, 0.0L);
  r.lse.assign(p.num_seqs * p.num_heads, 0.0L);
  r.logit_magnitude.assign(p.num_seqs * p.num_heads, 0.0L);
  r.value_magnitude.assign(p.num_seqs * p.num_heads, 0.0L);
  std::vector<long double> logits;
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const DenseSequenceKV kv = dense_sequence_kv(p, s);
    const int64_t n = kv.context_len;
    logits.assign(n, 0.0L);
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const int64_t kvh = h / queries_per_kv;
      const long double slope = p.alibi_slopes.empty() ? 0.0L : p.alibi_slopes.at(h);
      std::vector<long double> q(hs);
      for (int64_t d = 0; d < hs; ++d) {
        q[d] = read(p.dtype, p.query, token_index(p.query_layout, s, h, d), "query");
      }
      // Pass 1: logits, their maximum, and the magnitude the dot products pass through.
      long double max = -INFINITY;
      long double& logit_magnitude = r.logit_magnitude[s * p.num_heads + h];
      const long double scale = p.scale;
      for (int64_t t = 0; t < n; ++t) {
        long double dot = 0, dot_abs = 0;
        for (int64_t d = 0; d < hs; ++d) {
          const long double product = q[d] * kv.key[(t * kv_heads + kvh) * hs + d];
          dot += product;
          dot_abs += std::fabs(product);
        }
        const long double alibi = slope * static_cast<long double>(t - n + 1);
        logits[t] = scale * dot + alibi;
        if (logits[t] > max) max = logits[t];
        logit_magnitude = std::fmax(logit_magnitude, std::fabs(scale) * dot_abs + std::fabs(alibi));
      }
      // Pass 2: normalizer and weighted values.
      long double sum = 0;
      for (int64_t t = 0; t < n; ++t) sum += std::exp(logits[t] - max);
      long double* out = &r.out[(s * p.num_heads + h) * hs];
      long double& value_magnitude = r.value_magnitude[s * p.num_heads + h];
      for (int64_t t = 0; t < n; ++t) {
        const long double weight = std::exp(logits[t] - max) / sum;
        for (int64_t d = 0; d < hs; ++d) {
          const long double v = kv.value[(t * kv_heads + kvh) * hs + d];
          out[d] += weight * v;
          value_magnitude = std::fmax(value_magnitude, std::fabs(v));
        }
      }
      r.lse[s * p.num_heads + h] = max + std::log(sum);
    }
  }
  return r;
}

std::vector<double> OracleAttention::out_double() const {
  return std::vector<double>(out.begin(), out.end());
}

std::vector<double> OracleAttention::lse_double() const {
  return std::vector<double>(lse.begin(), lse.end());
}

CopyBuffers gather_cached_kv(const CacheCopyProblem& p) {
  const ref::PagedCacheLayout& c = p.cache;
  const std::size_t size = dtype_size(p.dtype);
  CopyBuffers result{p.key, p.value};
  for (std::size_t t = 0; t < p.slot_mapping.size(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot - block * c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t token = static_cast<int64_t>(t);
        copy_element(size, p.key_cache, key_index(c, block, h, d, offset), result.key,
                     token_index(p.key_layout, token, h, d));
        copy_element(size, p.value_cache, value_index(c, block, h, d, offset), result.value,
                     token_index(p.value_layout, token, h, d));
      }
    }
  }
  return result;
}

CopyBuffers reshape_and_cache(const CacheCopyProblem& p) {
  const ref::PagedCacheLayout& c = p.cache;
  const std::size_t size = dtype_size(p.dtype);
  CopyBuffers result{p.key_cache, p.value_cache};
  for (std::size_t t = 0; t < p.slot_mapping.size(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot - block * c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t token = static_cast<int64_t>(t);
        copy_element(size, p.key, token_index(p.key_layout, token, h, d), result.key,
                     key_index(c, block, h, d, offset));
        copy_element(size, p.value, token_index(p.value_layout, token, h, d), result.value,
                     value_index(c, block, h, d, offset));
      }
    }
  }
  return result;
}

}  // namespace pagecheck::oracle
