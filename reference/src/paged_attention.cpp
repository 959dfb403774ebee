/// Reference paged attention. Work is split into (sequence, kv head) groups: a group's key and
/// value tiles are decoded once into doubles and reused by every query row and query head of
/// the group (the sequence's new tokens times the heads sharing the kv head). Logits, the
/// max-subtracted softmax and the weighted value sum are accumulated in double with Eigen; one
/// matrix-vector product per query vector and block over exactly the slots that vector
/// attends, so that a GQA group computes bit for bit what the same heads compute with repeated
/// kv heads, and a query row computes bit for bit what a decode of its own context would.
/// With an observer, each group also keeps its logits before the softmax and their magnitudes
/// (sum_d |q_d k_td|, a plain loop over the same decoded tiles) and hands them over at its end.
#include "pagecheck/reference/paged_attention.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "pagecheck/reference/parallel.h"
#include "tile_decode.h"

namespace pagecheck::ref {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Computes the groups of one problem; holds scratch buffers reused across groups.
class GroupWorker {
 public:
  GroupWorker(const PagedAttentionProblem& p, PagedAttentionResult& r, const GroupObserver* observe)
      : p_(p),
        r_(r),
        observe_(observe),
        group_(p.num_heads / p.num_kv_heads()),
        key_plan_(detail::make_tile_plan(p.cache, detail::CacheTensor::kKey, {p.head_size(), 1})),
        value_plan_(
            detail::make_tile_plan(p.cache, detail::CacheTensor::kValue, {1, p.block_size()})),
        value_buffer_(p.cache.combined ? p.key_cache.data() : p.value_cache.data()) {
    key_tile_.resize(p.block_size(), p.head_size());
    value_tile_.resize(p.head_size(), p.block_size());
  }

  /// Fills out and lse of every query row of `seq` for the query heads of kv head `kv_head`.
  void run(int64_t seq, int64_t kv_head) {
    const RaggedBatch& batch = p_.batch;
    const int64_t hs = p_.head_size(), bs = p_.block_size();
    const int64_t ctx = batch.context_lens[seq];
    const int64_t q_len = batch.query_len(seq), first_row = batch.query_begin(seq);
    const int64_t first_head = kv_head * group_;
    const int64_t count = q_len * group_;  // query vectors: row-major over (row, head of group)
    if (static_cast<int64_t>(queries_.size()) < count) grow(count);
    // The span of key positions any vector attends: the union of the rows' ranges.
    int64_t span_lo = ctx, span_hi = 0;
    for (int64_t i = 0; i < q_len; ++i) {
      const AttendedRange range = p_.attended(seq, i);
      for (int64_t j = 0; j < group_; ++j) ranges_[i * group_ + j] = range;
      if (range.lo < range.hi) {
        span_lo = std::min(span_lo, range.lo);
        span_hi = std::max(span_hi, range.hi);
      }
    }
    for (int64_t v = 0; v < count; ++v) {
      const int64_t row = first_row + v / group_, head = first_head + v % group_;
      for (int64_t d = 0; d < hs; ++d) {
        queries_[v](d) =
            load_element(p_.dtype, p_.query.data(), p_.query_layout.offset(row, head, d));
      }
      weights_[v].resize(ranges_[v].hi - ranges_[v].lo);
      if (observe_ != nullptr) magnitudes_[v].resize(weights_[v].size());
      accum_[v].setZero();
    }
    const int64_t first_block = span_lo / bs, end_block = (span_hi + bs - 1) / bs;
    const int32_t* table = batch.block_table.data() + seq * batch.max_blocks_per_seq;
    const double k_scale = p_.cache.scale_at(p_.k_scale, kv_head);
    const double v_scale = p_.cache.scale_at(p_.v_scale, kv_head);

    // Pass 1: logits[t] = q . k_t, one decoded key tile at a time, only the attended slots.
    for (int64_t b = first_block; b < end_block; ++b) {
      if (b + 1 < end_block) {
        detail::prefetch_tile(p_.cache, key_plan_, p_.key_cache.data(), table[b + 1], kv_head);
      }
      const int64_t s0 = std::max(span_lo, b * bs) - b * bs;
      const int64_t s1 = std::min(span_hi, (b + 1) * bs) - b * bs;
      detail::decode_tile(p_.cache, key_plan_, p_.key_cache.data(), table[b], kv_head, s0, s1,
                          k_scale, key_tile_.data());
      for (int64_t v = 0; v < count; ++v) {
        const int64_t t0 = std::max(ranges_[v].lo, b * bs);
        const int64_t t1 = std::min(ranges_[v].hi, (b + 1) * bs);
        if (t0 >= t1) continue;
        weights_[v].segment(t0 - ranges_[v].lo, t1 - t0).noalias() =
            key_tile_.middleRows(t0 - b * bs, t1 - t0) * queries_[v];
        if (observe_ != nullptr) dot_magnitudes(v, b, t0, t1);
      }
    }
    for (int64_t v = 0; v < count; ++v) softmax(v, first_row + v / group_, first_head + v % group_);
    // Pass 2: accum = sum_t w_t * v_t, one decoded value tile at a time; out = accum / sum.
    for (int64_t b = first_block; b < end_block; ++b) {
      if (b + 1 < end_block) {
        detail::prefetch_tile(p_.cache, value_plan_, value_buffer_, table[b + 1], kv_head);
      }
      const int64_t s0 = std::max(span_lo, b * bs) - b * bs;
      const int64_t s1 = std::min(span_hi, (b + 1) * bs) - b * bs;
      detail::decode_tile(p_.cache, value_plan_, value_buffer_, table[b], kv_head, s0, s1, v_scale,
                          value_tile_.data());
      for (int64_t v = 0; v < count; ++v) {
        const int64_t t0 = std::max(ranges_[v].lo, b * bs);
        const int64_t t1 = std::min(ranges_[v].hi, (b + 1) * bs);
        if (t0 >= t1) continue;
        accum_[v].noalias() += value_tile_.middleCols(t0 - b * bs, t1 - t0) *
                               weights_[v].segment(t0 - ranges_[v].lo, t1 - t0);
      }
    }
    for (int64_t v = 0; v < count; ++v) {
      const int64_t row = first_row + v / group_, head = first_head + v % group_;
      double* out = r_.out.data() + (row * p_.num_heads + head) * hs;
      const bool empty = ranges_[v].lo >= ranges_[v].hi;
      for (int64_t d = 0; d < hs; ++d) out[d] = empty ? 0.0 : accum_[v](d) / sums_[v];
    }
    if (observe_ != nullptr) hand_over(seq, kv_head, count, first_row, first_head);
  }

 private:
  /// Room for `count` query vectors.
  void grow(int64_t count) {
    queries_.resize(count, Eigen::VectorXd(p_.head_size()));
    weights_.resize(count);
    accum_.resize(count, Eigen::VectorXd(p_.head_size()));
    sums_.resize(count);
    ranges_.resize(count);
    logits_.resize(count);
    magnitudes_.resize(count);
  }

  /// magnitudes_[v] at key positions [t0, t1) of block b (decoded in key_tile_): the plain sums
  /// sum_d |q_d k_td|, scaled and given the ALiBi term in softmax().
  void dot_magnitudes(int64_t v, int64_t b, int64_t t0, int64_t t1) {
    const int64_t hs = p_.head_size(), bs = p_.block_size();
    const Eigen::VectorXd& q = queries_[v];
    for (int64_t t = t0; t < t1; ++t) {
      const double* k = key_tile_.data() + (t - b * bs) * hs;
      double mag = 0;
      for (int64_t d = 0; d < hs; ++d) mag += std::fabs(q(d) * k[d]);
      magnitudes_[v](t - ranges_[v].lo) = mag;
    }
  }

  /// Hands the group's intermediates to the observer.
  void hand_over(int64_t seq, int64_t kv_head, int64_t count, int64_t first_row,
                 int64_t first_head) {
    intermediates_.seq = seq;
    intermediates_.kv_head = kv_head;
    intermediates_.rows.resize(count);
    for (int64_t v = 0; v < count; ++v) {
      RowIntermediates& row = intermediates_.rows[v];
      row.row = first_row + v / group_;
      row.head = first_head + v % group_;
      row.range = ranges_[v];
      const bool empty = ranges_[v].lo >= ranges_[v].hi;
      row.logits = empty ? nullptr : logits_[v].data();
      row.magnitudes = empty ? nullptr : magnitudes_[v].data();
    }
    (*observe_)(intermediates_);
  }

  /// The ALiBi term of the t-th attended key of `range`: slope * (key position - row position).
  static double alibi_bias(double slope, const AttendedRange& range, int64_t t) {
    return slope * static_cast<double>(range.lo + t - range.position);
  }

  /// Turns the dot products of vector `v` (query row `row`, head `head`) into max-subtracted
  /// weights w_t = exp(l_t - m) and writes lse = m + log(sum); the order of operations is
  /// docs/reference.md's: scale, soft-cap, ALiBi, (window: the range), sink.
  void softmax(int64_t v, int64_t row, int64_t head) {
    const AttentionFeatures& f = p_.features;
    const AttendedRange& range = ranges_[v];
    double& lse = r_.lse[row * p_.num_heads + head];
    if (range.lo >= range.hi) {
      lse = -std::numeric_limits<double>::infinity();
      return;
    }
    Eigen::VectorXd& w = weights_[v];
    const int64_t n = range.hi - range.lo;
    w *= static_cast<double>(p_.scale);
    if (f.soft_cap > 0) {
      const double cap = f.soft_cap;
      for (int64_t t = 0; t < n; ++t) w(t) = cap * std::tanh(w(t) / cap);
    }
    if (!f.alibi_slopes.empty()) {
      const double slope = f.alibi_slopes[head];
      for (int64_t t = 0; t < n; ++t) w(t) += alibi_bias(slope, range, t);
    }
    if (observe_ != nullptr) keep_logits(v, head);
    double max = w.maxCoeff();
    const bool sink = !f.sinks.empty();
    if (sink) max = std::max(max, static_cast<double>(f.sinks[head]));
    double sum = 0;
    for (int64_t t = 0; t < n; ++t) {
      w(t) = std::exp(w(t) - max);
      sum += w(t);
    }
    if (sink) sum += std::exp(static_cast<double>(f.sinks[head]) - max);
    sums_[v] = sum;
    lse = max + std::log(sum);
  }

  /// Keeps vector v's logits (weights_[v] before the max subtraction) and turns its dot-product
  /// magnitudes into the logits' magnitudes: scale * sum_d |q_d k_td| + |ALiBi term|.
  void keep_logits(int64_t v, int64_t head) {
    const AttentionFeatures& f = p_.features;
    const AttendedRange& range = ranges_[v];
    logits_[v] = weights_[v];
    const double scale = p_.scale;
    const double slope = f.alibi_slopes.empty() ? 0.0 : f.alibi_slopes[head];
    Eigen::VectorXd& mag = magnitudes_[v];
    for (int64_t t = 0; t < range.hi - range.lo; ++t) {
      mag(t) = scale * mag(t) + std::fabs(alibi_bias(slope, range, t));
    }
  }

  const PagedAttentionProblem& p_;
  PagedAttentionResult& r_;
  const GroupObserver* observe_;             ///< NULL: no intermediates kept
  int64_t group_;                            ///< query heads per kv head
  detail::TilePlan key_plan_;                ///< runs of a key tile
  detail::TilePlan value_plan_;              ///< runs of a value tile
  const std::byte* value_buffer_;            ///< value_cache, or key_cache when combined
  RowMatrix key_tile_;                       ///< [block_size, head_size] decoded keys
  RowMatrix value_tile_;                     ///< [head_size, block_size] decoded values
  std::vector<Eigen::VectorXd> queries_;     ///< per query vector: decoded query
  std::vector<Eigen::VectorXd> weights_;     ///< per query vector: logits, then exp(l - max)
  std::vector<Eigen::VectorXd> accum_;       ///< per query vector: weighted value sum
  std::vector<double> sums_;                 ///< per query vector: softmax denominator
  std::vector<AttendedRange> ranges_;        ///< per query vector: attended key positions
  std::vector<Eigen::VectorXd> logits_;      ///< per query vector (observed): logits before the max
  std::vector<Eigen::VectorXd> magnitudes_;  ///< per query vector (observed): logit magnitudes
  GroupIntermediates intermediates_;         ///< what the observer gets (observed)
};

PagedAttentionResult run_reference(const PagedAttentionProblem& problem,
                                   const ReferenceOptions& options, const GroupObserver* observe) {
  problem.validate();
  PagedAttentionResult result;
  result.num_rows = problem.batch.num_query_tokens();
  result.num_heads = problem.num_heads;
  result.head_size = problem.head_size();
  result.out.assign(result.num_rows * problem.num_heads * problem.head_size(), kNaN);
  result.lse.assign(result.num_rows * problem.num_heads, kNaN);

  // One task per (sequence, kv head); each thread keeps one GroupWorker (its scratch buffers).
  const int64_t num_kv_heads = problem.num_kv_heads();
  run_tasks(problem.num_seqs() * num_kv_heads, options.num_threads, [&] {
    return [worker = std::make_shared<GroupWorker>(problem, result, observe),
            num_kv_heads](int64_t task) { worker->run(task / num_kv_heads, task % num_kv_heads); };
  });
  return result;
}

}  // namespace

std::vector<std::byte> PagedAttentionResult::out_storage(DType dtype) const {
  std::vector<std::byte> bytes(out.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < out.size(); ++i) {
    store_element(dtype, bytes.data(), static_cast<int64_t>(i), out[i]);
  }
  return bytes;
}

PagedAttentionResult paged_attention(const PagedAttentionProblem& problem,
                                     const ReferenceOptions& options) {
  return run_reference(problem, options, nullptr);
}

PagedAttentionResult paged_attention(const PagedAttentionProblem& problem,
                                     const ReferenceOptions& options,
                                     const GroupObserver& observe) {
  return run_reference(problem, options, &observe);
}

}  // namespace pagecheck::ref
