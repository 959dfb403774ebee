/// The attention error model of docs/tolerances.md, evaluated per output element.
#include "pagecheck/verify/tolerance.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace pagecheck::verify {
namespace {

/// Significand bits including the implicit one, and the smallest normal exponent.
int precision_bits(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 24;
    case DType::kFloat16:
      return 11;
    case DType::kBFloat16:
      return 8;
  }
  return 24;
}

int min_normal_exponent(DType dtype) {
  return dtype == DType::kFloat16 ? -14 : -126;
}

/// Absolute rounding error bound of one tiny weight: half the float16 subnormal spacing, or
/// the smallest float32/bfloat16 normal (a kernel may flush subnormal weights to zero).
double tiny_weight_error(DType dtype) {
  return dtype == DType::kFloat16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -126);
}

constexpr double kU32 = 0x1.0p-24;

/// Computes the tolerance of one (sequence, kv head) group.
void group_tolerance(const ref::PagedAttentionProblem& p, const ref::PagedAttentionResult& r,
                     const ToleranceModel& m, int64_t seq, int64_t kv, std::vector<double>& tol) {
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t hs = c.head_size, bs = c.block_size;
  const int64_t ctx = p.context_lens[seq];
  const int64_t group = p.num_heads / c.num_kv_heads;
  std::vector<double> keys(ctx * hs), values(ctx * hs);
  for (int64_t t = 0; t < ctx; ++t) {
    const int64_t block = p.block_table[seq * p.max_blocks_per_seq + t / bs];
    for (int64_t d = 0; d < hs; ++d) {
      keys[t * hs + d] =
          load_element(p.dtype, p.key_cache.data(), c.key_offset(block, kv, d, t % bs));
      values[t * hs + d] =
          load_element(p.dtype, p.value_cache.data(), c.value_offset(block, kv, d, t % bs));
    }
  }
  const double us = unit_roundoff(p.dtype);
  const double eta = tiny_weight_error(p.dtype);
  const double T = static_cast<double>(ctx), D = static_cast<double>(hs);
  std::vector<double> q(hs), logits(ctx), weights(ctx);
  for (int64_t j = 0; j < group; ++j) {
    const int64_t head = kv * group + j;
    for (int64_t d = 0; d < hs; ++d) {
      q[d] = load_element(p.dtype, p.query.data(), p.query_layout.offset(seq, head, d));
    }
    const double slope = p.alibi_slopes.empty() ? 0.0 : p.alibi_slopes[head];
    double lmax = -INFINITY, big_l = 0;
    for (int64_t t = 0; t < ctx; ++t) {
      double dot = 0, mag = 0;
      for (int64_t d = 0; d < hs; ++d) {
        dot += q[d] * keys[t * hs + d];
        mag += std::fabs(q[d] * keys[t * hs + d]);
      }
      const double bias = slope * static_cast<double>(t - ctx + 1);
      logits[t] = p.scale * dot + bias;
      big_l = std::max(big_l, p.scale * mag + std::fabs(bias));
      lmax = std::max(lmax, logits[t]);
    }
    double z = 0;
    for (int64_t t = 0; t < ctx; ++t) z += (weights[t] = std::exp(logits[t] - lmax));
    for (double& w : weights) w /= z;
    const double delta = kU32 * (D + 4.0) * big_l;
    const double* out = r.out.data() + (seq * p.num_heads + head) * hs;
    double* t_out = tol.data() + (seq * p.num_heads + head) * hs;
    for (int64_t d = 0; d < hs; ++d) {
      double s1 = 0, s2 = 0, s3 = 0, vmax = 0;
      for (int64_t t = 0; t < ctx; ++t) {
        const double v = values[t * hs + d];
        const double dv = std::fabs(v - out[d]);
        s1 += weights[t] * std::fabs(v);
        s2 += weights[t] * dv;
        s3 += weights[t] * (lmax - logits[t]) * dv;
        vmax = std::max(vmax, std::fabs(v));
      }
      const double a =
          m.safety * (kU32 * (2.0 * T + 16.0) * s1 + (2.0 * delta + m.c_exp * kU32) * s2 +
                      m.c_arg * kU32 * s3 + m.c_mid * us * s1 +
                      (m.c_mid * eta + std::ldexp(1.0, -126)) * T * vmax);
      t_out[d] = a + 0.5 * ulp(p.dtype, std::fabs(out[d]) + a);
    }
  }
}

}  // namespace

std::string ToleranceModel::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "%s (c_mid=%g, c_exp=%g, c_arg=%g, safety=%g)",
                c_mid == 0 ? "float32 accumulation, one final rounding"
                           : "float32 accumulation, intermediates rounded to the storage dtype",
                c_mid, c_exp, c_arg, safety);
  return text;
}

double unit_roundoff(DType dtype) {
  return std::ldexp(1.0, -precision_bits(dtype));
}

double ulp(DType dtype, double magnitude) {
  const int p = precision_bits(dtype);
  const int emin = min_normal_exponent(dtype);
  if (!(magnitude >= std::ldexp(1.0, emin))) return std::ldexp(1.0, emin - (p - 1));  // subnormal
  int e = 0;
  std::frexp(magnitude, &e);  // magnitude in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 1 - (p - 1));
}

std::vector<double> attention_tolerance(const ref::PagedAttentionProblem& p,
                                        const ref::PagedAttentionResult& r,
                                        const ToleranceModel& model, int num_threads) {
  const int64_t hs = p.head_size();
  if (static_cast<int64_t>(r.out.size()) != p.num_seqs * p.num_heads * hs) {
    throw std::invalid_argument("attention_tolerance: reference result has the wrong size");
  }
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (!std::isfinite(r.out[i])) {
      throw std::runtime_error("the reference output is not finite at flat index " +
                               std::to_string(i) + " (did it read a poisoned element?)");
    }
  }
  std::vector<double> tol(r.out.size(), 0.0);
  const int64_t tasks = p.num_seqs * p.num_kv_heads();
  int64_t threads = num_threads > 0 ? num_threads : std::thread::hardware_concurrency();
  threads = std::clamp<int64_t>(threads, 1, tasks);
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (int64_t i; (i = next.fetch_add(1)) < tasks;) {
        group_tolerance(p, r, model, i / p.num_kv_heads(), i % p.num_kv_heads(), tol);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return tol;
}

}  // namespace pagecheck::verify
