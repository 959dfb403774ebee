/// CPU simulations of correct and buggy kernel variants (registry "sim").
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/sim_engine_style.h"
#include "sim_planted_features.h"
#include "sim_planted_s6.h"

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
#include "pagecheck/verify/gen/materialize.h"

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

/// Reference with a modified problem per sequence (decode variants: one row per sequence):
/// `edit` returns the context length to use, or 0 for "this sequence's output is NaN".
std::vector<double> with_context(const ref::PagedAttentionProblem& p,
                                 const std::function<int32_t(int32_t, int64_t)>& edit) {
  ref::PagedAttentionProblem q = p;
  const int64_t seqs = p.num_seqs();
  std::vector<bool> nan_row(seqs, false);
  for (int64_t s = 0; s < seqs; ++s) {
    const int32_t given = p.batch.context_lens[s];
    const int32_t len = edit(given, p.block_size());
    nan_row[s] = len <= 0;
    q.batch.context_lens[s] = len <= 0 ? std::min<int32_t>(1, given) : len;
  }
  std::vector<double> out = reference_out(q);
  const int64_t row = p.num_heads * p.head_size();
  for (int64_t s = 0; s < seqs; ++s) {
    const int64_t begin = p.batch.query_begin(s) * row, end = begin + p.batch.query_len(s) * row;
    if (nan_row[s]) std::fill(out.begin() + begin, out.begin() + end, kNaN);
  }
  return out;
}

/// Query head h reads kv head h % num_kv_heads instead of h / group: the reference on a
/// problem whose query heads (and slopes) are permuted so that its mapping does the same.
std::vector<double> wrong_kv_head(const ref::PagedAttentionProblem& p) {
  const int64_t kv = p.num_kv_heads(), group = p.num_heads / kv, hs = p.head_size();
  const int64_t rows = p.query_layout.num_tokens;
  auto target = [&](int64_t h) { return (h % kv) * group + h / kv; };
  ref::PagedAttentionProblem q = p;
  const std::size_t size = dtype_size(p.dtype);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::memcpy(q.query.data() + q.query_layout.offset(r, target(h), 0) * size,
                  p.query.data() + p.query_layout.offset(r, h, 0) * size, hs * size);
    }
  }
  const std::vector<float>& slopes = p.features.alibi_slopes;
  for (int64_t h = 0; h < p.num_heads && !slopes.empty(); ++h) {
    q.features.alibi_slopes[target(h)] = slopes[h];
  }
  const std::vector<double> permuted = reference_out(q);
  std::vector<double> out(permuted.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::copy_n(permuted.begin() + (r * p.num_heads + target(h)) * hs, hs,
                  out.begin() + (r * p.num_heads + h) * hs);
    }
  }
  return out;
}

/// Emulation of a split-K decode kernel (a simulated kernel, not a reference: it computes as
/// such a kernel does): float32 logits, sums, weighted values and merge over partitions of
/// `partition` tokens (the size the simulated variant declares). With `lowp`, softmax
/// weights, weight*value products and per-partition outputs are rounded to the storage dtype
/// as some engines' kernels do. `max_bug` merges partitions by their sums only (ignoring their
/// maxima). Keys and values are read through the cache layout (any kind, fp8 codes times their
/// scale as a float32 product).
std::vector<double> split_k(const ref::PagedAttentionProblem& p, int64_t partition, bool max_bug,
                            bool lowp) {
  const auto keep = [&](double v) { return lowp ? round_to(p.dtype, v) : v; };
  const int64_t hs = p.head_size(), bs = p.block_size(), group = p.num_heads / p.num_kv_heads();
  const ref::PagedCacheLayout& c = p.cache;
  const ref::RaggedBatch& b = p.batch;
  const std::byte* values = c.combined ? p.key_cache.data() : p.value_cache.data();
  const auto key = [&](int64_t block, int64_t kv, int64_t slot, int64_t d) {
    return static_cast<float>(
        load_element(c.dtype, p.key_cache.data(), c.key_at(block, kv, slot, d)) *
        c.scale_at(p.k_scale, kv));
  };
  const auto value = [&](int64_t block, int64_t kv, int64_t slot, int64_t d) {
    return static_cast<float>(load_element(c.dtype, values, c.value_at(block, kv, slot, d)) *
                              c.scale_at(p.v_scale, kv));
  };
  std::vector<double> out(p.query_layout.num_tokens * p.num_heads * hs, 0.0);
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    const int64_t ctx = b.context_lens[s], row = b.query_begin(s);
    const int32_t* table = b.block_table.data() + s * b.max_blocks_per_seq;
    for (int64_t h = 0; h < p.num_heads && ctx > 0; ++h) {
      const int64_t kv = h / group;
      std::vector<float> q(hs), logits(ctx);
      for (int64_t d = 0; d < hs; ++d) {
        q[d] = static_cast<float>(
            load_element(p.dtype, p.query.data(), p.query_layout.offset(row, h, d)));
      }
      const float slope = p.features.alibi_slopes.empty() ? 0.0f : p.features.alibi_slopes[h];
      for (int64_t t = 0; t < ctx; ++t) {
        float dot = 0;
        for (int64_t d = 0; d < hs; ++d) dot += q[d] * key(table[t / bs], kv, t % bs, d);
        logits[t] = dot * p.scale + slope * static_cast<float>(t - ctx + 1);
      }
      std::vector<float> maxes, sums;
      std::vector<std::vector<float>> partial;
      for (int64_t begin = 0; begin < ctx; begin += partition) {
        const int64_t end = std::min(ctx, begin + partition);
        float m = -INFINITY, z = 0;
        for (int64_t t = begin; t < end; ++t) m = std::max(m, logits[t]);
        for (int64_t t = begin; t < end; ++t) z += std::exp(logits[t] - m);
        std::vector<float> acc(hs, 0.0f);
        for (int64_t t = begin; t < end; ++t) {
          const float w = static_cast<float>(keep(std::exp(logits[t] - m) / z));
          for (int64_t d = 0; d < hs; ++d) {
            const float v = value(table[t / bs], kv, t % bs, d);
            acc[d] += static_cast<float>(keep(static_cast<double>(w) * v));
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
        out[(row * p.num_heads + h) * hs + d] = acc;
      }
    }
  }
  return out;
}

/// Partition size of the simulated split-K variants (they declare it, as every variant does).
constexpr int64_t kSimPartition = 256;

/// A variant's caps as the simulations declare them: the decode features of the built-in
/// kernels (ALiBi, token / head / output strides, shared and independent cache padding).
gen::VariantCaps sim_caps(const std::string& name, pc_family family) {
  const uint64_t caps = (family == PC_FAMILY_PAGED_ATTENTION ? uint64_t{PC_CAP_ALIBI} : 0u) |
                        PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT |
                        PC_CAP_CACHE_PAD_SHARED | PC_CAP_CACHE_PAD;
  return gen::make_caps(name, family, {64, 80, 128}, {8, 16, 32}, caps);
}

/// Caps of a reference-backed simulation: everything the vocabulary can express (every page
/// layout, fp8 caches with both scale kinds, combined K/V; attention: multi-token queries,
/// non-causal, sinks, window, soft-cap, context-0 rows left untouched; gather: dequantize).
gen::VariantCaps full_sim_caps(const std::string& name, pc_family family) {
  gen::VariantCaps c = sim_caps(name, family);
  c.kv_dtypes = c.dtypes;
  c.kv_dtypes.insert(c.kv_dtypes.end(), {DType::kFloat8E4M3, DType::kFloat8E5M2});
  c.cache_kinds = {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND};
  c.scale_kinds = {ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead};
  c.caps |= PC_CAP_COMBINED_KV;
  if (family == PC_FAMILY_PAGED_ATTENTION) {
    c.caps |= PC_CAP_SINKS | PC_CAP_WINDOW | PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL;
    c.max_query_len = 32;
    c.context0 = PC_CONTEXT0_UNTOUCHED;
  }
  if (family == PC_FAMILY_GATHER_CACHED_KV) c.caps |= PC_CAP_DEQUANTIZE;
  return c;
}

/// Caps of a simulated split-K variant: sim_caps plus its declared partition size (and, for
/// the engine-style one, its declared roundings).
gen::VariantCaps split_caps(const std::string& name, bool lowp) {
  gen::VariantCaps c = sim_caps(name, PC_FAMILY_PAGED_ATTENTION);
  c.partition_sizes = {kSimPartition};
  if (lowp) c.precision.rounded = PC_ROUND_WEIGHTS | PC_ROUND_PRODUCTS | PC_ROUND_PARTITION_OUTPUTS;
  return c;
}

/// Caps of the engine-style simulation (sim_engine_style.h): sim_caps, its partition size and
/// its declaration, the loosest model pagecheck accepts.
gen::VariantCaps engine_style_caps(const std::string& name, const EngineStyleOptions& o) {
  gen::VariantCaps c = sim_caps(name, PC_FAMILY_PAGED_ATTENTION);
  c.partition_sizes = {o.partition_size};
  c.precision = to_abi(engine_style_precision(o));
  return c;
}

class SimBackend final : public CaseBackend {
 public:
  explicit SimBackend(bool allow_crash) {
    const auto plain = [](const std::string& name) {
      return sim_caps(name, PC_FAMILY_PAGED_ATTENTION);
    };
    auto attention = [&](const std::string& name, AttentionFn fn) {
      add(plain(name), SimVariant{std::move(fn), {}});
    };
    add(full_sim_caps("sim_reference", PC_FAMILY_PAGED_ATTENTION), SimVariant{reference_out, {}});
    add(split_caps("sim_split_k_fp32", false),
        SimVariant{[](const auto& p) { return split_k(p, kSimPartition, false, false); }, {}});
    add(split_caps("sim_split_k_lowp", true),
        SimVariant{[](const auto& p) { return split_k(p, kSimPartition, false, true); }, {}});
    add(engine_style_caps("sim_engine_style", {}),
        SimVariant{[](const auto& p) { return engine_style_attention(p); }, {}});
    {
      EngineStyleOptions dropped;
      dropped.drop_last_partition = true;
      add(engine_style_caps("sim_engine_style_drop_partition", dropped),
          SimVariant{[dropped](const auto& p) { return engine_style_attention(p, dropped); }, {}});
    }
    attention("sim_table_stride_from_width", sim_table_stride_from_width);
    attention("sim_finite_mask_sentinel", sim_finite_mask_sentinel);
    attention("sim_gqa_group_le8", sim_gqa_group_le8);
    for (FeatureSim& f : planted_feature_sims()) {  // issues 15, 16
      add(std::move(f.caps), SimVariant{std::move(f.attention), std::move(f.copy)});
    }
    add(split_caps("sim_parts_from_bound", false),
        SimVariant{[](const auto& p) { return sim_partitions_from_bound(p, kSimPartition); }, {}});
    add(sim_caps("sim_gather_one_block_per_token", PC_FAMILY_GATHER_CACHED_KV),
        SimVariant{{}, sim_gather_one_block_per_token});
    add(sim_caps("sim_reshape_one_block_per_token", PC_FAMILY_RESHAPE_AND_CACHE),
        SimVariant{{}, sim_reshape_one_block_per_token});
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
    add(split_caps("sim_partition_max_only", false),
        SimVariant{[](const auto& p) { return split_k(p, kSimPartition, true, false); }, {}});
    add(plain("sim_race_last_bit"), SimVariant{reference_out, {}, true});
    // The same race in a variant that declares it: each run is compared with the reference,
    // and it passes.
    gen::VariantCaps declared = plain("sim_race_declared");
    declared.nondeterministic = true;
    add(declared, SimVariant{reference_out, {}, true});
    // Declares that context-0 rows become +0 but divides 0 by 0 there (NaN).
    gen::VariantCaps zeros = plain("sim_context0_nan");
    zeros.context0 = PC_CONTEXT0_ZEROS;
    add(zeros, SimVariant{[](const ref::PagedAttentionProblem& p) {
                            return with_context(p, [](int32_t len, int64_t) { return len; });
                          },
                          {}});
    if (allow_crash) {
      attention("sim_crash", [](const ref::PagedAttentionProblem& p) {
        if (p.num_seqs() >= 3) std::abort();  // a kernel that takes the process down
        return reference_out(p);
      });
      attention("sim_hang", [](const ref::PagedAttentionProblem& p) {
        while (p.num_seqs() >= 5) std::this_thread::sleep_for(std::chrono::seconds(1));
        return reference_out(p);
      });
    }
    add(full_sim_caps("sim_gather_reference", PC_FAMILY_GATHER_CACHED_KV),
        SimVariant{{}, [](auto& p) { ref::gather_cached_kv(p); }});
    add(sim_caps("sim_gather_reads_slot_minus1", PC_FAMILY_GATHER_CACHED_KV),
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::CacheCopyProblem q = p;
                     for (int64_t& slot : q.slot_mapping) slot = slot < 0 ? 0 : slot;
                     ref::gather_cached_kv(q);
                     p.key = q.key;
                     p.value = q.value;
                   }});
    add(sim_caps("sim_gather_value_layout_keys", PC_FAMILY_GATHER_CACHED_KV),
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::gather_cached_kv(p);
                     // Keys read as if they had the x-split value layout (no x split).
                     const ref::PagedCacheLayout& c = p.cache;
                     const std::size_t size = dtype_size(p.dtype);
                     for (int64_t t = 0; t < p.num_tokens(); ++t) {
                       const int64_t slot = p.slot_mapping[t];
                       if (slot < 0) continue;
                       const int64_t block = slot / c.block_size, off = slot % c.block_size;
                       for (int64_t h = 0; h < c.num_kv_heads; ++h) {
                         for (int64_t d = 0; d < c.head_size; ++d) {
                           const int64_t src =
                               block * c.key.block + h * c.key.head + d * c.block_size + off;
                           std::memcpy(p.key.data() + p.key_layout.offset(t, h, d) * size,
                                       p.key_cache.data() + src * size, size);
                         }
                       }
                     }
                   }});
    add(full_sim_caps("sim_reshape_reference", PC_FAMILY_RESHAPE_AND_CACHE),
        SimVariant{{}, [](auto& p) { ref::reshape_and_cache(p); }});
    add(sim_caps("sim_reshape_writes_slot_minus1", PC_FAMILY_RESHAPE_AND_CACHE),
        SimVariant{{}, [](ref::CacheCopyProblem& p) {
                     ref::reshape_and_cache(p);
                     const ref::PagedCacheLayout& c = p.cache;
                     const std::size_t size = dtype_size(p.dtype);
                     for (int64_t t = 0; t < p.num_tokens(); ++t) {
                       if (p.slot_mapping[t] != -1) continue;
                       // block = -1 / bs = 0, offset = -1 % bs = -1, as in C.
                       for (int64_t h = 0; h < c.num_kv_heads; ++h) {
                         for (int64_t d = 0; d < c.head_size; ++d) {
                           const int64_t dst = c.key_at(0, h, -1, d);
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
    if (v.caps.context0 == PC_CONTEXT0_UNTOUCHED) keep_output_poison(p, run.out);
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
  /// The rows of context-0 sequences as a kernel that never writes them leaves them: the
  /// output poison the buffer started with.
  static void keep_output_poison(const ref::PagedAttentionProblem& p, std::vector<std::byte>& out) {
    const uint32_t bits = dtype_info(p.dtype).output_poison_bits;
    const std::size_t row =
        static_cast<std::size_t>(p.num_heads * p.head_size()) * dtype_size(p.dtype);
    for (int64_t s = 0; s < p.num_seqs(); ++s) {
      if (p.batch.context_lens[s] != 0) continue;
      gen::fill_pattern(out.data() + p.batch.query_begin(s) * row, p.batch.query_len(s) * row,
                        &bits, dtype_size(p.dtype));
    }
  }

  void add(gen::VariantCaps caps, SimVariant sim) {
    BackendVariant v;
    v.registry = "sim";
    v.caps = std::move(caps);
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
  std::vector<std::string> names = {"sim_reference",        "sim_split_k_fp32",
                                    "sim_engine_style",     "sim_race_declared",
                                    "sim_gather_reference", "sim_reshape_reference"};
  for (std::string& n : planted_feature_sim_names(true)) names.push_back(n);
  return names;
}

std::vector<std::string> buggy_sim_variants() {
  std::vector<std::string> names = {"sim_context_off_by_one",
                                    "sim_skip_last_partial_block",
                                    "sim_zero_weight_nan",
                                    "sim_scale_twice",
                                    "sim_wrong_kv_head",
                                    "sim_partition_max_only",
                                    "sim_engine_style_drop_partition",
                                    "sim_table_stride_from_width",
                                    "sim_finite_mask_sentinel",
                                    "sim_parts_from_bound",
                                    "sim_gqa_group_le8",
                                    "sim_gather_one_block_per_token",
                                    "sim_reshape_one_block_per_token",
                                    "sim_race_last_bit",
                                    "sim_context0_nan",
                                    "sim_gather_reads_slot_minus1",
                                    "sim_gather_value_layout_keys",
                                    "sim_reshape_writes_slot_minus1"};
  for (std::string& n : planted_feature_sim_names(false)) names.push_back(n);
  return names;
}

std::unique_ptr<CaseBackend> make_sim_backend(bool allow_crash) {
  return std::make_unique<SimBackend>(allow_crash);
}

}  // namespace pagecheck::verify::check
