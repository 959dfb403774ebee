/// CPU simulations of correct and buggy kernel variants (registry "sim").
#include "pagecheck/verify/check/sim_backend.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>
#include <thread>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::verify::check {
namespace {

using AttentionFn = std::function<std::vector<double>(const ref::PagedAttentionProblem&)>;
using CopyFn = std::function<void(ref::CacheCopyProblem&)>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct SimVariant {
  AttentionFn attention;  ///< float64-or-emulated output (rounded to storage afterwards)
  CopyFn copy;            ///< in-place copy on the problem's buffers
  bool racy = false;      ///< attention: one element is an ulp off on some runs
};

/// The output of a racy simulation on run `run`: on about one run in three (chosen by a hash
/// of the inputs and the run index, so that a case and its artefact repeat exactly) one
/// element comes out one float32 ulp higher, as when the order of an atomicAdd reduction
/// changes between launches. Within tolerance of the reference every time, and right on two
/// runs in three; only comparing two runs shows it (in float32 outputs the last bit differs;
/// in 16-bit ones only when the value lies near a rounding boundary).
void race_last_bit(const ref::PagedAttentionProblem& p, int run, std::vector<double>& out) {
  if (out.empty()) return;
  uint64_t h = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(p.query.data()), p.query.size()));
  h ^= 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(run + 1);
  h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;  // splitmix64 finalizer
  h = (h ^ (h >> 29)) * 0x94d049bb133111ebull;
  h ^= h >> 32;
  if (h % 3 != 0) return;
  double& v = out[static_cast<std::size_t>(h / 3 % out.size())];
  v = std::nextafter(static_cast<float>(v), std::numeric_limits<float>::infinity());
}

/// Rounds to the storage dtype and back.
double round_to(DType dtype, double v) {
  std::byte tmp[4];
  store_element(dtype, tmp, 0, v);
  return load_element(dtype, tmp, 0);
}

std::vector<double> reference_out(const ref::PagedAttentionProblem& p) {
  return ref::paged_attention(p, {1}).out;
}

/// Reference with a modified problem per sequence: `edit` returns the context length to use,
/// or 0 for "this sequence's output is NaN".
std::vector<double> with_context(const ref::PagedAttentionProblem& p,
                                 const std::function<int32_t(int32_t, int64_t)>& edit) {
  ref::PagedAttentionProblem q = p;
  std::vector<bool> nan_row(p.num_seqs, false);
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const int32_t len = edit(p.context_lens[s], p.block_size());
    nan_row[s] = len <= 0;
    q.context_lens[s] = len <= 0 ? 1 : len;
  }
  std::vector<double> out = reference_out(q);
  const int64_t row = p.num_heads * p.head_size();
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    if (nan_row[s]) std::fill(out.begin() + s * row, out.begin() + (s + 1) * row, kNaN);
  }
  return out;
}

/// Query head h reads kv head h % num_kv_heads instead of h / group: the reference on a
/// problem whose query heads (and slopes) are permuted so that its mapping does the same.
std::vector<double> wrong_kv_head(const ref::PagedAttentionProblem& p) {
  const int64_t kv = p.num_kv_heads(), group = p.num_heads / kv, hs = p.head_size();
  auto target = [&](int64_t h) { return (h % kv) * group + h / kv; };
  ref::PagedAttentionProblem q = p;
  const std::size_t size = dtype_size(p.dtype);
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::memcpy(q.query.data() + q.query_layout.offset(s, target(h), 0) * size,
                  p.query.data() + p.query_layout.offset(s, h, 0) * size, hs * size);
    }
  }
  for (int64_t h = 0; h < p.num_heads && !p.alibi_slopes.empty(); ++h) {
    q.alibi_slopes[target(h)] = p.alibi_slopes[h];
  }
  const std::vector<double> permuted = reference_out(q);
  std::vector<double> out(permuted.size());
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::copy_n(permuted.begin() + (s * p.num_heads + target(h)) * hs, hs,
                  out.begin() + (s * p.num_heads + h) * hs);
    }
  }
  return out;
}

/// Emulation of a split-K kernel: float32 logits, sums, weighted values and merge (partitions
/// of 256 tokens). With `lowp`, softmax weights, weight*value products and per-partition
/// outputs are rounded to the storage dtype as some engines' kernels do. `max_bug` merges
/// partitions by their sums only (ignoring their maxima).
std::vector<double> split_k(const ref::PagedAttentionProblem& p, bool max_bug, bool lowp) {
  const auto keep = [&](double v) { return lowp ? round_to(p.dtype, v) : v; };
  constexpr int64_t kPartition = 256;
  const int64_t hs = p.head_size(), bs = p.block_size(), group = p.num_heads / p.num_kv_heads();
  const ref::PagedCacheLayout& c = p.cache;
  std::vector<double> out(p.num_seqs * p.num_heads * hs);
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const int64_t ctx = p.context_lens[s];
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const int64_t kv = h / group;
      std::vector<float> q(hs), logits(ctx);
      for (int64_t d = 0; d < hs; ++d) {
        q[d] = static_cast<float>(
            load_element(p.dtype, p.query.data(), p.query_layout.offset(s, h, d)));
      }
      const float slope = p.alibi_slopes.empty() ? 0.0f : p.alibi_slopes[h];
      for (int64_t t = 0; t < ctx; ++t) {
        const int64_t block = p.block_table[s * p.max_blocks_per_seq + t / bs];
        float dot = 0;
        for (int64_t d = 0; d < hs; ++d) {
          dot += q[d] * static_cast<float>(load_element(p.dtype, p.key_cache.data(),
                                                        c.key_offset(block, kv, d, t % bs)));
        }
        logits[t] = dot * p.scale + slope * static_cast<float>(t - ctx + 1);
      }
      std::vector<float> maxes, sums;
      std::vector<std::vector<float>> partial;
      for (int64_t begin = 0; begin < ctx; begin += kPartition) {
        const int64_t end = std::min(ctx, begin + kPartition);
        float m = -INFINITY, z = 0;
        for (int64_t t = begin; t < end; ++t) m = std::max(m, logits[t]);
        for (int64_t t = begin; t < end; ++t) z += std::exp(logits[t] - m);
        std::vector<float> acc(hs, 0.0f);
        for (int64_t t = begin; t < end; ++t) {
          const int64_t block = p.block_table[s * p.max_blocks_per_seq + t / bs];
          const float w = static_cast<float>(keep(std::exp(logits[t] - m) / z));
          for (int64_t d = 0; d < hs; ++d) {
            const double v =
                load_element(p.dtype, p.value_cache.data(), c.value_offset(block, kv, d, t % bs));
            acc[d] += static_cast<float>(keep(static_cast<double>(w) * static_cast<float>(v)));
          }
        }
        for (float& a : acc) a = static_cast<float>(keep(a));
        maxes.push_back(m);
        sums.push_back(z);
        partial.push_back(std::move(acc));
      }
      float global = -INFINITY, total = 0;
      for (float m : maxes) global = std::max(global, m);
      std::vector<float> weights(maxes.size());
      for (std::size_t j = 0; j < maxes.size(); ++j) {
        weights[j] = max_bug ? sums[j] : sums[j] * std::exp(maxes[j] - global);
        total += weights[j];
      }
      for (int64_t d = 0; d < hs; ++d) {
        float acc = 0;
        for (std::size_t j = 0; j < maxes.size(); ++j) acc += weights[j] / total * partial[j][d];
        out[(s * p.num_heads + h) * hs + d] = acc;
      }
    }
  }
  return out;
}

class SimBackend final : public CaseBackend {
 public:
  explicit SimBackend(bool allow_crash) {
    const uint32_t caps = PC_CAP_ALIBI | PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE;
    auto attention = [&](const std::string& name, AttentionFn fn) {
      add(name, PC_FAMILY_PAGED_ATTENTION, caps, SimVariant{std::move(fn), {}});
    };
    attention("sim_reference", reference_out);
    attention("sim_split_k_fp32", [](const auto& p) { return split_k(p, false, false); });
    attention("sim_split_k_lowp", [](const auto& p) { return split_k(p, false, true); });
    attention("sim_context_off_by_one", [](const auto& p) {
      return with_context(p, [](int32_t len, int64_t) { return len - 1; });
    });
    attention("sim_skip_last_partial_block", [](const auto& p) {
      return with_context(p, [](int32_t len, int64_t bs) {
        return len % bs == 0 ? len : static_cast<int32_t>(len / bs * bs);
      });
    });
    attention("sim_zero_weight_nan", [](const auto& p) {
      return with_context(p, [](int32_t len, int64_t bs) { return len % bs == 0 ? len : 0; });
    });
    attention("sim_scale_twice", [](const auto& p) {
      ref::PagedAttentionProblem q = p;
      q.scale = p.scale * p.scale;
      return reference_out(q);
    });
    attention("sim_wrong_kv_head", wrong_kv_head);
    attention("sim_partition_max_only", [](const auto& p) { return split_k(p, true, false); });
    add("sim_race_last_bit", PC_FAMILY_PAGED_ATTENTION, caps, SimVariant{reference_out, {}, true});
    // The same race in a variant that declares it (ABI v2's declaration; none can today): each
    // run is compared with the reference, and it passes.
    add("sim_race_declared", PC_FAMILY_PAGED_ATTENTION, caps, SimVariant{reference_out, {}, true},
        /*deterministic=*/false);
    if (allow_crash) {
      attention("sim_crash", [](const ref::PagedAttentionProblem& p) {
        if (p.num_seqs >= 3) std::abort();  // a kernel that takes the process down
        return reference_out(p);
      });
      attention("sim_hang", [](const ref::PagedAttentionProblem& p) {
        while (p.num_seqs >= 5) std::this_thread::sleep_for(std::chrono::seconds(1));
        return reference_out(p);
      });
    }
    add("sim_gather_reference", PC_FAMILY_GATHER_CACHED_KV, caps,
        SimVariant{{}, [](auto& p) { ref::gather_cached_kv(p); }});
    add("sim_gather_reads_slot_minus1", PC_FAMILY_GATHER_CACHED_KV, caps,
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::CacheCopyProblem q = p;
                     for (int64_t& slot : q.slot_mapping) slot = slot < 0 ? 0 : slot;
                     ref::gather_cached_kv(q);
                     p.key = q.key;
                     p.value = q.value;
                   }});
    add("sim_gather_value_layout_keys", PC_FAMILY_GATHER_CACHED_KV, caps,
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::gather_cached_kv(p);
                     // Keys read as if they had the value layout (no x split).
                     const ref::PagedCacheLayout& c = p.cache;
                     const std::size_t size = dtype_size(p.dtype);
                     for (int64_t t = 0; t < p.num_tokens(); ++t) {
                       const int64_t slot = p.slot_mapping[t];
                       if (slot < 0) continue;
                       const int64_t block = slot / c.block_size, off = slot % c.block_size;
                       for (int64_t h = 0; h < c.num_kv_heads; ++h) {
                         for (int64_t d = 0; d < c.head_size; ++d) {
                           const int64_t src = block * c.key_stride_block + h * c.key_stride_head +
                                               d * c.block_size + off;
                           std::memcpy(p.key.data() + p.key_layout.offset(t, h, d) * size,
                                       p.key_cache.data() + src * size, size);
                         }
                       }
                     }
                   }});
    add("sim_reshape_reference", PC_FAMILY_RESHAPE_AND_CACHE, caps,
        SimVariant{{}, [](auto& p) { ref::reshape_and_cache(p); }});
    add("sim_reshape_writes_slot_minus1", PC_FAMILY_RESHAPE_AND_CACHE, caps,
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::reshape_and_cache(p);
                     const ref::PagedCacheLayout& c = p.cache;
                     const std::size_t size = dtype_size(p.dtype);
                     for (int64_t t = 0; t < p.num_tokens(); ++t) {
                       if (p.slot_mapping[t] != -1) continue;
                       // block = -1 / bs = 0, offset = -1 % bs = -1, as in C.
                       for (int64_t h = 0; h < c.num_kv_heads; ++h) {
                         for (int64_t d = 0; d < c.head_size; ++d) {
                           const int64_t dst = c.key_offset(0, h, d, -1);
                           if (dst < 0) continue;  // would hit the guard zone on a GPU
                           std::memcpy(p.key_cache.data() + dst * size,
                                       p.key.data() + p.key_layout.offset(t, h, d) * size, size);
                         }
                       }
                     }
                   }});
  }

  const std::vector<BackendVariant>& variants() const override { return variants_; }
  bool available(std::string*) const override { return true; }
  std::string description() const override { return "CPU simulation"; }
  bool is_simulation() const override { return true; }

  AttentionRun run_attention(const BackendVariant& v, const ref::PagedAttentionProblem& p,
                             const ref::TokenLayout&, int run_index) override {
    std::vector<double> out = sim(v).attention(p);
    if (sim(v).racy) race_last_bit(p, run_index, out);
    AttentionRun run;
    run.outcome.disposition = LaunchDisposition::kLaunched;
    run.out.resize(out.size() * dtype_size(p.dtype));
    for (std::size_t i = 0; i < out.size(); ++i) {
      store_element(p.dtype, run.out.data(), static_cast<int64_t>(i), out[i]);
    }
    return run;
  }

  CopyRun run_gather(const BackendVariant& v, const ref::CacheCopyProblem& p, int) override {
    ref::CacheCopyProblem q = p;
    sim(v).copy(q);
    CopyRun run;
    run.outcome.disposition = LaunchDisposition::kLaunched;
    run.first = std::move(q.key);
    run.second = std::move(q.value);
    return run;
  }

  CopyRun run_reshape(const BackendVariant& v, const ref::CacheCopyProblem& p, int) override {
    ref::CacheCopyProblem q = p;
    sim(v).copy(q);
    CopyRun run;
    run.outcome.disposition = LaunchDisposition::kLaunched;
    run.first = std::move(q.key_cache);
    run.second = std::move(q.value_cache);
    return run;
  }

 private:
  void add(const std::string& name, pc_family family, uint32_t caps, SimVariant sim,
           bool deterministic = true) {
    BackendVariant v;
    v.registry = "sim";
    v.deterministic = deterministic;
    v.caps = gen::make_caps(name, family, {64, 80, 128}, {8, 16, 32}, caps);
    v.description = "CPU simulation";
    sims_.push_back(std::make_unique<SimVariant>(std::move(sim)));
    v.handle = sims_.back().get();
    variants_.push_back(std::move(v));
  }
  static const SimVariant& sim(const BackendVariant& v) {
    return *static_cast<const SimVariant*>(v.handle);
  }

  std::vector<std::unique_ptr<SimVariant>> sims_;
  std::vector<BackendVariant> variants_;
};

}  // namespace

std::vector<std::string> correct_sim_variants() {
  return {"sim_reference", "sim_split_k_fp32", "sim_race_declared", "sim_gather_reference",
          "sim_reshape_reference"};
}

std::vector<std::string> buggy_sim_variants() {
  return {"sim_context_off_by_one",
          "sim_skip_last_partial_block",
          "sim_zero_weight_nan",
          "sim_scale_twice",
          "sim_wrong_kv_head",
          "sim_partition_max_only",
          "sim_race_last_bit",
          "sim_gather_reads_slot_minus1",
          "sim_gather_value_layout_keys",
          "sim_reshape_writes_slot_minus1"};
}

std::unique_ptr<CaseBackend> make_sim_backend(bool allow_crash) {
  return std::make_unique<SimBackend>(allow_crash);
}

}  // namespace pagecheck::verify::check
