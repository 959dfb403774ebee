/// Reference paged-attention decode. Work is split into (sequence, kv head) groups: a group's
/// key and value tiles are decoded once into doubles and reused by every query head of the
/// group. Logits, the max-subtracted softmax and the weighted value sum are accumulated in
/// double with Eigen; one matrix-vector product per query head and block, so that a GQA group
/// computes bit for bit what the same heads compute with repeated kv heads.
#include "pagecheck/reference/paged_attention.h"

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "tile_decode.h"

namespace pagecheck::ref {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Computes the groups of one problem; holds scratch buffers reused across groups.
class GroupWorker {
 public:
  GroupWorker(const PagedAttentionProblem& p, PagedAttentionResult& r)
      : p_(p), r_(r), group_(p.num_heads / p.num_kv_heads()) {
    key_tile_.resize(p.block_size(), p.head_size());
    value_tile_.resize(p.head_size(), p.block_size());
    queries_.assign(group_, Eigen::VectorXd(p.head_size()));
    weights_.resize(group_);
    accum_.assign(group_, Eigen::VectorXd(p.head_size()));
    sums_.resize(group_);
  }

  /// Fills out[seq, h, :] and lse[seq, h] for the query heads h of kv head `kv_head`.
  void run(int64_t seq, int64_t kv_head) {
    const PagedCacheLayout& c = p_.cache;
    const int64_t hs = c.head_size, bs = c.block_size;
    const int64_t ctx = p_.context_lens[seq];
    const int64_t num_used_blocks = (ctx + bs - 1) / bs;  // entries past these are never read
    const int32_t* table = p_.block_table.data() + seq * p_.max_blocks_per_seq;
    const int64_t first_head = kv_head * group_;
    for (int64_t j = 0; j < group_; ++j) {
      for (int64_t d = 0; d < hs; ++d) {
        queries_[j](d) =
            load_element(p_.dtype, p_.query.data(), p_.query_layout.offset(seq, first_head + j, d));
      }
      weights_[j].resize(ctx);
    }
    // Pass 1: logits[t] = scale * q . k_t (+ ALiBi below), one decoded key tile at a time.
    for (int64_t b = 0; b < num_used_blocks; ++b) {
      if (b + 1 < num_used_blocks) {
        detail::prefetch_key_tile(p_.dtype, c, p_.key_cache.data(), table[b + 1], kv_head);
      }
      const int64_t rows = std::min(bs, ctx - b * bs);  // never touch slots past the context
      detail::decode_key_tile(p_.dtype, c, p_.key_cache.data(), table[b], kv_head, rows,
                              key_tile_.data());
      for (int64_t j = 0; j < group_; ++j) {
        weights_[j].segment(b * bs, rows).noalias() = key_tile_.topRows(rows) * queries_[j];
      }
    }
    // Stable softmax: w_t = exp(l_t - max); lse = max + log(sum_t w_t).
    const double scale = p_.scale;
    for (int64_t j = 0; j < group_; ++j) {
      Eigen::VectorXd& w = weights_[j];
      w *= scale;
      if (!p_.alibi_slopes.empty()) {
        const double slope = p_.alibi_slopes[first_head + j];
        for (int64_t t = 0; t < ctx; ++t) w(t) += slope * static_cast<double>(t - ctx + 1);
      }
      const double max = w.maxCoeff();
      double sum = 0;
      for (int64_t t = 0; t < ctx; ++t) {
        w(t) = std::exp(w(t) - max);
        sum += w(t);
      }
      sums_[j] = sum;
      r_.lse[seq * p_.num_heads + first_head + j] = max + std::log(sum);
      accum_[j].setZero();
    }
    // Pass 2: accum = sum_t w_t * v_t, one decoded value tile at a time; out = accum / sum.
    for (int64_t b = 0; b < num_used_blocks; ++b) {
      if (b + 1 < num_used_blocks) {
        detail::prefetch_value_tile(p_.dtype, c, p_.value_cache.data(), table[b + 1], kv_head);
      }
      const int64_t cols = std::min(bs, ctx - b * bs);
      detail::decode_value_tile(p_.dtype, c, p_.value_cache.data(), table[b], kv_head, cols,
                                value_tile_.data());
      for (int64_t j = 0; j < group_; ++j) {
        accum_[j].noalias() += value_tile_.leftCols(cols) * weights_[j].segment(b * bs, cols);
      }
    }
    for (int64_t j = 0; j < group_; ++j) {
      double* out = r_.out.data() + (seq * p_.num_heads + first_head + j) * hs;
      for (int64_t d = 0; d < hs; ++d) out[d] = accum_[j](d) / sums_[j];
    }
  }

 private:
  const PagedAttentionProblem& p_;
  PagedAttentionResult& r_;
  int64_t group_;                         ///< query heads per kv head
  RowMatrix key_tile_;                    ///< [block_size, head_size] decoded keys
  RowMatrix value_tile_;                  ///< [head_size, block_size] decoded values
  std::vector<Eigen::VectorXd> queries_;  ///< per query head of the group: decoded query
  std::vector<Eigen::VectorXd> weights_;  ///< per query head: logits, then exp(l - max)
  std::vector<Eigen::VectorXd> accum_;    ///< per query head: weighted value sum
  std::vector<double> sums_;              ///< per query head: softmax denominator
};

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
  problem.validate();
  PagedAttentionResult result;
  result.num_seqs = problem.num_seqs;
  result.num_heads = problem.num_heads;
  result.head_size = problem.head_size();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  result.out.assign(problem.num_seqs * problem.num_heads * problem.head_size(), kNaN);
  result.lse.assign(problem.num_seqs * problem.num_heads, kNaN);

  // Groups are handed out dynamically to num_threads workers (the caller's thread included).
  const int64_t num_kv_heads = problem.num_kv_heads();
  const int64_t num_tasks = problem.num_seqs * num_kv_heads;
  int64_t num_threads = options.num_threads > 0
                            ? options.num_threads
                            : static_cast<int64_t>(std::thread::hardware_concurrency());
  num_threads = std::clamp<int64_t>(num_threads, 1, num_tasks);
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      GroupWorker worker(problem, result);
      for (int64_t task = next++; task < num_tasks; task = next++) {
        worker.run(task / num_kv_heads, task % num_kv_heads);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = num_tasks;
    }
  };
  std::vector<std::thread> threads;
  for (int64_t i = 1; i < num_threads; ++i) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace pagecheck::ref
