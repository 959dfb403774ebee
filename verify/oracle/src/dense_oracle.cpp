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

/// Bounds-checked element write of `value` rounded to `dtype`.
void write(DType dtype, std::vector<std::byte>& buffer, int64_t index, double value,
           const char* what) {
  const int64_t elements = static_cast<int64_t>(buffer.size() / dtype_size(dtype));
  if (index < 0 || index >= elements) {
    throw std::out_of_range(std::string("oracle: ") + what + " element " + std::to_string(index) +
                            " is outside the buffer of " + std::to_string(elements) + " elements");
  }
  store_element(dtype, buffer.data(), index, value);
}

/// Element index of (block, head, slot, dim) in one cache tensor, from its raw strides: the
/// dim splits into dim / dim_split groups of dim_split lanes.
int64_t strided_index(const ref::CacheTensorStrides& s, int64_t block, int64_t head, int64_t slot,
                      int64_t dim) {
  const int64_t group = dim / s.dim_split;
  const int64_t lane = dim - group * s.dim_split;
  return lane * s.dim + group * s.group + slot * s.slot + head * s.head + block * s.block;
}

/// Key-cache element index of key[block, head, slot, dim].
int64_t key_index(const ref::PagedCacheLayout& c, int64_t block, int64_t head, int64_t slot,
                  int64_t dim) {
  return strided_index(c.key, block, head, slot, dim);
}

/// Value element index of value[block, head, slot, dim], in the value buffer (or, for a
/// combined cache, in the key buffer, past value_base).
int64_t value_index(const ref::PagedCacheLayout& c, int64_t block, int64_t head, int64_t slot,
                    int64_t dim) {
  return strided_index(c.value, block, head, slot, dim) + (c.combined ? c.value_base : 0);
}

/// Element index of a token tensor [token][head][dim].
int64_t token_index(const ref::TokenLayout& l, int64_t token, int64_t head, int64_t dim) {
  return dim + head * l.stride_head + token * l.stride_token;
}

/// The scale of kv head `head` (1 without scales; entry 0 for a per-tensor scale).
long double scale_of(const std::vector<float>& scales, int64_t head) {
  if (scales.empty()) return 1.0L;
  return scales.size() == 1 ? scales[0] : scales.at(head);
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

/// Query rows of sequence `seq`: [first, first + count).
struct Rows {
  int64_t first = 0;
  int64_t count = 0;
};
Rows rows_of(const ref::RaggedBatch& b, int64_t seq) {
  if (b.query_start.empty()) return {seq, 1};
  return {b.query_start.at(seq), b.query_start.at(seq + 1) - b.query_start.at(seq)};
}

}  // namespace

DenseSequenceKV dense_sequence_kv(const PagedAttentionProblem& p, int64_t seq) {
  const ref::PagedCacheLayout& c = p.cache;
  const ref::RaggedBatch& b = p.batch;
  const std::vector<std::byte>& values = c.combined ? p.key_cache : p.value_cache;
  DenseSequenceKV kv;
  kv.context_len = b.context_lens.at(seq);
  kv.num_kv_heads = c.num_kv_heads;
  kv.head_size = c.head_size;
  kv.key.resize(kv.context_len * c.num_kv_heads * c.head_size);
  kv.value.resize(kv.key.size());
  for (int64_t t = 0; t < kv.context_len; ++t) {
    const int64_t block = b.block_table.at(seq * b.max_blocks_per_seq + t / c.block_size);
    if (block < 0 || block >= c.num_blocks) {
      throw std::out_of_range("oracle: sequence " + std::to_string(seq) + " token " +
                              std::to_string(t) + " maps to block " + std::to_string(block));
    }
    const int64_t slot = t % c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      const long double k_scale = scale_of(p.k_scale, h), v_scale = scale_of(p.v_scale, h);
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t dense = (t * c.num_kv_heads + h) * c.head_size + d;
        kv.key[dense] =
            read(c.dtype, p.key_cache, key_index(c, block, h, slot, d), "key_cache") * k_scale;
        kv.value[dense] =
            read(c.dtype, values, value_index(c, block, h, slot, d), "value_cache") * v_scale;
      }
    }
  }
  return kv;
}

OracleAttention paged_attention(const PagedAttentionProblem& p) {
  const int64_t hs = p.cache.head_size;
  const int64_t kv_heads = p.cache.num_kv_heads;
  const int64_t queries_per_kv = p.num_heads / kv_heads;
  const ref::AttentionFeatures& f = p.features;
  const int64_t num_rows = p.query_layout.num_tokens;
  OracleAttention r;
  r.num_rows = num_rows;
  r.num_heads = p.num_heads;
  r.head_size = hs;
  r.out.assign(num_rows * p.num_heads * hs, 0.0L);
  r.lse.assign(num_rows * p.num_heads, -INFINITY);
  r.logit_magnitude.assign(num_rows * p.num_heads, 0.0L);
  r.value_magnitude.assign(num_rows * p.num_heads, 0.0L);
  r.attended.assign(num_rows, 0);
  std::vector<long double> logits;
  std::vector<char> attends;
  for (int64_t s = 0; s < p.batch.num_seqs; ++s) {
    const DenseSequenceKV kv = dense_sequence_kv(p, s);
    const int64_t n = kv.context_len;
    const Rows rows = rows_of(p.batch, s);
    for (int64_t i = 0; i < rows.count; ++i) {
      const int64_t row = rows.first + i;
      const int64_t pos = n - rows.count + i;
      // The token set, token by token.
      attends.assign(n, 0);
      for (int64_t t = 0; t < n; ++t) {
        const bool future = f.causal && t > pos;
        const bool outside_window = f.window > 0 && t <= pos - f.window;
        attends[t] = !future && !outside_window;
        r.attended.at(row) += attends[t];
      }
      if (r.attended[row] == 0) continue;  // out stays 0, lse -inf
      logits.assign(n, 0.0L);
      for (int64_t h = 0; h < p.num_heads; ++h) {
        const int64_t kvh = h / queries_per_kv;
        const int64_t at = row * p.num_heads + h;
        const long double slope = f.alibi_slopes.empty() ? 0.0L : f.alibi_slopes.at(h);
        std::vector<long double> q(hs);
        for (int64_t d = 0; d < hs; ++d) {
          q[d] = read(p.dtype, p.query, token_index(p.query_layout, row, h, d), "query");
        }
        // Pass 1: logits, their maximum (the sink included), and the magnitudes.
        long double max = -INFINITY;
        long double& logit_magnitude = r.logit_magnitude[at];
        const long double scale = p.scale;
        for (int64_t t = 0; t < n; ++t) {
          if (!attends[t]) continue;
          long double dot = 0, dot_abs = 0;
          for (int64_t d = 0; d < hs; ++d) {
            const long double product = q[d] * kv.key[(t * kv_heads + kvh) * hs + d];
            dot += product;
            dot_abs += std::fabs(product);
          }
          long double logit = scale * dot;
          if (f.soft_cap > 0) {
            const long double cap = f.soft_cap;
            logit = cap * std::tanh(logit / cap);
          }
          const long double alibi = slope * static_cast<long double>(t - pos);
          logits[t] = logit + alibi;
          if (logits[t] > max) max = logits[t];
          logit_magnitude =
              std::fmax(logit_magnitude, std::fabs(scale) * dot_abs + std::fabs(alibi));
        }
        const bool has_sink = !f.sinks.empty();
        const long double sink = has_sink ? f.sinks.at(h) : 0.0L;
        if (has_sink) {
          if (sink > max) max = sink;
          logit_magnitude = std::fmax(logit_magnitude, std::fabs(sink));
        }
        // Pass 2: normalizer and weighted values.
        long double sum = has_sink ? std::exp(sink - max) : 0.0L;
        for (int64_t t = 0; t < n; ++t) {
          if (attends[t]) sum += std::exp(logits[t] - max);
        }
        long double* out = &r.out[at * hs];
        long double& value_magnitude = r.value_magnitude[at];
        for (int64_t t = 0; t < n; ++t) {
          if (!attends[t]) continue;
          const long double weight = std::exp(logits[t] - max) / sum;
          for (int64_t d = 0; d < hs; ++d) {
            const long double v = kv.value[(t * kv_heads + kvh) * hs + d];
            out[d] += weight * v;
            value_magnitude = std::fmax(value_magnitude, std::fabs(v));
          }
        }
        r.lse[at] = max + std::log(sum);
      }
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
  const std::vector<std::byte>& values = c.combined ? p.key_cache : p.value_cache;
  CopyBuffers result{p.key, p.value};
  for (std::size_t t = 0; t < p.slot_mapping.size(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot - block * c.block_size;
    const int64_t token = static_cast<int64_t>(t);
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t k_from = key_index(c, block, h, offset, d);
        const int64_t v_from = value_index(c, block, h, offset, d);
        const int64_t k_to = token_index(p.key_layout, token, h, d);
        const int64_t v_to = token_index(p.value_layout, token, h, d);
        if (p.dtype == c.dtype) {  // raw codes
          copy_element(dtype_size(c.dtype), p.key_cache, k_from, result.key, k_to);
          copy_element(dtype_size(c.dtype), values, v_from, result.value, v_to);
          continue;
        }
        // code * scale as one float32 product (the conversion rule of docs/dtypes.md), then
        // rounded to dtype.
        const float key = static_cast<float>(read(c.dtype, p.key_cache, k_from, "key_cache"));
        const float value = static_cast<float>(read(c.dtype, values, v_from, "value_cache"));
        const float k_scale = static_cast<float>(scale_of(p.k_scale, h));
        const float v_scale = static_cast<float>(scale_of(p.v_scale, h));
        write(p.dtype, result.key, k_to, key * k_scale, "key");
        write(p.dtype, result.value, v_to, value * v_scale, "value");
      }
    }
  }
  return result;
}

CopyBuffers reshape_and_cache(const CacheCopyProblem& p) {
  const ref::PagedCacheLayout& c = p.cache;
  CopyBuffers result{p.key_cache, p.value_cache};
  std::vector<std::byte>& values = c.combined ? result.key : result.value;
  for (std::size_t t = 0; t < p.slot_mapping.size(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot - block * c.block_size;
    const int64_t token = static_cast<int64_t>(t);
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        const int64_t k_from = token_index(p.key_layout, token, h, d);
        const int64_t v_from = token_index(p.value_layout, token, h, d);
        const int64_t k_to = key_index(c, block, h, offset, d);
        const int64_t v_to = value_index(c, block, h, offset, d);
        if (p.dtype == c.dtype) {  // same dtype: raw elements
          copy_element(dtype_size(p.dtype), p.key, k_from, result.key, k_to);
          copy_element(dtype_size(p.dtype), p.value, v_from, values, v_to);
          continue;
        }
        // value / scale as one float32 quotient (docs/dtypes.md), then rounded to the fp8 grid.
        const float key = static_cast<float>(read(p.dtype, p.key, k_from, "key"));
        const float value = static_cast<float>(read(p.dtype, p.value, v_from, "value"));
        const float k_scale = static_cast<float>(scale_of(p.k_scale, h));
        const float v_scale = static_cast<float>(scale_of(p.v_scale, h));
        write(c.dtype, result.key, k_to, key / k_scale, "key_cache");
        write(c.dtype, values, v_to, value / v_scale, "value_cache");
      }
    }
  }
  return result;
}

}  // namespace pagecheck::oracle
