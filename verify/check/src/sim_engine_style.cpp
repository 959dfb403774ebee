/// The engine-style CPU variant (sim_engine_style.h): float32 arithmetic where an engine's
/// kernel keeps float32, the storage dtype where it rounds.
#include "pagecheck/verify/check/sim_engine_style.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pagecheck::verify::check {
namespace {

/// A float32 value rounded to the storage dtype (fp16 / bf16 / float32) and read back.
float to_storage(DType dtype, float v) {
  std::byte tmp[4];
  store_element(dtype, tmp, 0, v);
  return static_cast<float>(load_element(dtype, tmp, 0));
}

/// One (query row, head): what a thread block of the kernel holds.
class RowKernel {
 public:
  RowKernel(const ref::PagedAttentionProblem& p, const EngineStyleOptions& o) : p_(p), o_(o) {}

  /// Writes out[0, head_size) for query row `i` of sequence `seq` and query head `head`.
  void run(int64_t seq, int64_t i, int64_t head, double* out) {
    const ref::RaggedBatch& b = p_.batch;
    const ref::AttentionFeatures& f = p_.features;
    const int64_t hs = p_.head_size(), bs = p_.block_size();
    const int64_t ctx = b.context_lens[seq];
    const ref::AttendedRange range = p_.attended(seq, i);
    const int64_t position = range.position, begin = range.lo, end = range.hi;
    std::fill(out, out + hs, 0.0);
    if (ctx == 0 || begin >= end) return;
    const int64_t kv = head / (p_.num_heads / p_.num_kv_heads());
    const int64_t row = b.query_begin(seq) + i;
    const float ks = p_.cache.scale_at(p_.k_scale, kv);
    const float vs = p_.cache.scale_at(p_.v_scale, kv);
    const std::byte* values = p_.cache.combined ? p_.key_cache.data() : p_.value_cache.data();
    const int32_t* table = b.block_table.data() + seq * b.max_blocks_per_seq;
    q_.resize(hs);
    for (int64_t d = 0; d < hs; ++d) {
      q_[d] = static_cast<float>(
          load_element(p_.dtype, p_.query.data(), p_.query_layout.offset(row, head, d)));
    }
    // Logits in float32.
    const float slope = f.alibi_slopes.empty() ? 0.0f : f.alibi_slopes[head];
    logits_.resize(end - begin);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t block = table[t / bs], slot = t % bs;
      float dot = 0.0f;
      for (int64_t d = 0; d < hs; ++d) {
        const float k = ks * static_cast<float>(load_element(p_.cache.dtype, p_.key_cache.data(),
                                                             p_.cache.key_at(block, kv, slot, d)));
        dot += q_[d] * k;
      }
      float logit = dot * p_.scale;
      if (f.soft_cap > 0) logit = f.soft_cap * std::tanh(logit / f.soft_cap);
      logits_[t - begin] = logit + slope * static_cast<float>(t - position);
    }
    // Partitions: max, sum of exp, normalized weights rounded, chunked storage sums.
    const int64_t np = (end - begin + o_.partition_size - 1) / o_.partition_size;
    maxes_.assign(np, -INFINITY);
    sums_.assign(np, 0.0f);
    partial_.assign(np * hs, 0.0f);
    for (int64_t j = 0; j < np; ++j) {
      const int64_t p0 = begin + j * o_.partition_size;
      const int64_t p1 = std::min(end, p0 + o_.partition_size);
      for (int64_t t = p0; t < p1; ++t) maxes_[j] = std::max(maxes_[j], logits_[t - begin]);
      for (int64_t t = p0; t < p1; ++t) sums_[j] += std::exp(logits_[t - begin] - maxes_[j]);
      float* acc = partial_.data() + j * hs;
      for (int64_t c0 = p0; c0 < p1; c0 += o_.chunk_terms) {
        const int64_t c1 = std::min(p1, c0 + o_.chunk_terms);
        chunk_.assign(hs, 0.0f);  // storage-dtype partial sums of this chunk
        for (int64_t t = c0; t < c1; ++t) {
          const float w = to_storage(p_.dtype, std::exp(logits_[t - begin] - maxes_[j]) / sums_[j]);
          const int64_t block = table[t / bs], slot = t % bs;
          for (int64_t d = 0; d < hs; ++d) {
            const float v =
                vs * static_cast<float>(load_element(p_.cache.dtype, values,
                                                     p_.cache.value_at(block, kv, slot, d)));
            chunk_[d] = to_storage(p_.dtype, chunk_[d] + to_storage(p_.dtype, w * v));
          }
        }
        for (int64_t d = 0; d < hs; ++d) acc[d] += chunk_[d];
      }
      for (int64_t d = 0; d < hs; ++d) acc[d] = to_storage(p_.dtype, acc[d]);
    }
    // Float32 merge; a sink joins the denominator with no value.
    const bool sink = !f.sinks.empty();
    float global = sink ? f.sinks[head] : -INFINITY;
    for (float m : maxes_) global = std::max(global, m);
    const int64_t merged = o_.drop_last_partition && np > 1 ? np - 1 : np;
    float total = sink ? std::exp(f.sinks[head] - global) : 0.0f;
    scaled_.resize(np);
    for (int64_t j = 0; j < merged; ++j) {
      scaled_[j] = sums_[j] * std::exp(maxes_[j] - global);
      total += scaled_[j];
    }
    for (int64_t d = 0; d < hs; ++d) {
      float acc = 0.0f;
      for (int64_t j = 0; j < merged; ++j) acc += scaled_[j] / total * partial_[j * hs + d];
      out[d] = acc;
    }
  }

 private:
  const ref::PagedAttentionProblem& p_;
  const EngineStyleOptions& o_;
  std::vector<float> q_, logits_, maxes_, sums_, partial_, chunk_, scaled_;
};

}  // namespace

PrecisionModel engine_style_precision(const EngineStyleOptions& options) {
  PrecisionModel m;
  m.pv = Accum::kStorage;
  m.round_weights = true;
  m.round_products = true;
  m.round_partition_outputs = true;
  m.storage_sum_terms = options.chunk_terms;
  return m;
}

std::vector<double> engine_style_attention(const ref::PagedAttentionProblem& p,
                                           const EngineStyleOptions& options) {
  p.validate();
  if (options.partition_size < 1 || options.chunk_terms < 1) {
    throw std::invalid_argument("engine_style_attention: partition_size " +
                                std::to_string(options.partition_size) + " and chunk_terms " +
                                std::to_string(options.chunk_terms) + " must be positive");
  }
  const int64_t hs = p.head_size();
  std::vector<double> out(p.batch.num_query_tokens() * p.num_heads * hs, 0.0);
  RowKernel kernel(p, options);
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    for (int64_t i = 0; i < p.batch.query_len(s); ++i) {
      const int64_t row = p.batch.query_begin(s) + i;
      for (int64_t h = 0; h < p.num_heads; ++h) {
        kernel.run(s, i, h, out.data() + (row * p.num_heads + h) * hs);
      }
    }
  }
  return out;
}

}  // namespace pagecheck::verify::check
