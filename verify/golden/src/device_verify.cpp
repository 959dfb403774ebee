/// Every kernel variant against every golden it supports, on the GPU.
#include <cmath>
#include <cstring>
#include <ostream>
#include <sstream>

#include "pagecheck/registry.h"
#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {
namespace {

/// Why `variant` cannot run `g`, or "" when it declares everything the golden needs.
std::string unsupported_reason(const VariantInfo& variant, const LoadedGolden& g) {
  const bool attention = g.family == PC_FAMILY_PAGED_ATTENTION;
  const ref::PagedCacheLayout& cache = attention ? g.attention.cache : g.copy.cache;
  const auto dtype = static_cast<pc_dtype>(static_cast<int>(g.dtype));
  if (!variant.supports(dtype, cache.head_size, cache.block_size)) {
    return "dtype/head size/block size not declared";
  }
  const auto packed_cache = ref::PagedCacheLayout::packed(
      g.dtype, cache.num_blocks, cache.num_kv_heads, cache.head_size, cache.block_size);
  const bool padded_cache = cache.key_stride_slot != packed_cache.key_stride_slot ||
                            cache.key_stride_group != packed_cache.key_stride_group ||
                            cache.key_stride_head != packed_cache.key_stride_head ||
                            cache.key_stride_block != packed_cache.key_stride_block ||
                            cache.value_stride_dim != packed_cache.value_stride_dim ||
                            cache.value_stride_head != packed_cache.value_stride_head ||
                            cache.value_stride_block != packed_cache.value_stride_block;
  const ref::TokenLayout& tokens = attention ? g.attention.query_layout : g.copy.key_layout;
  const bool strided = tokens.stride_head != tokens.head_size ||
                       tokens.stride_token != tokens.num_heads * tokens.head_size;
  const uint32_t caps = variant.variant.caps;
  if (padded_cache && !(caps & PC_CAP_PADDED_CACHE)) return "padded cache strides not declared";
  if (strided && !(caps & PC_CAP_STRIDED_TOKENS)) return "strided tokens not declared";
  if (attention && !g.attention.alibi_slopes.empty() && !(caps & PC_CAP_ALIBI)) {
    return "ALiBi not declared";
  }
  return "";
}

/// "" when every attention output element is within attention_tolerance of the float64
/// reference, otherwise a description of the failures.
std::string compare_attention(const LoadedGolden& g, const std::vector<std::byte>& out) {
  const ref::PagedAttentionProblem& p = g.attention;
  double max_abs_value = 0;
  const int64_t span = p.cache.value_span();
  for (int64_t i = 0; i < span; ++i) {
    const double v = load_element(p.dtype, p.value_cache.data(), i);
    if (std::isfinite(v)) max_abs_value = std::max(max_abs_value, std::fabs(v));
  }
  const auto n = static_cast<int64_t>(g.expected_out_f64.size());
  if (static_cast<int64_t>(out.size()) != n * static_cast<int64_t>(dtype_size(p.dtype))) {
    return "output has " + std::to_string(out.size()) + " bytes";
  }
  int64_t bad = 0;
  int64_t worst = -1;
  double worst_ratio = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double want = g.expected_out_f64[static_cast<std::size_t>(i)];
    const double got = load_element(p.dtype, out.data(), i);
    const double ratio = std::fabs(got - want) / attention_tolerance(p.dtype, want, max_abs_value);
    if (ratio <= 1.0) continue;  // NaN fails
    ++bad;
    if (worst < 0 || !(ratio <= worst_ratio)) worst = i, worst_ratio = ratio;
  }
  if (bad == 0) return "";
  const int64_t d = p.head_size();
  std::ostringstream text;
  text.precision(9);
  text << bad << " of " << n << " elements beyond tolerance; worst (seq,head,dim)=("
       << worst / (p.num_heads * d) << "," << (worst / d) % p.num_heads << "," << worst % d
       << ") want " << g.expected_out_f64[static_cast<std::size_t>(worst)] << " got "
       << load_element(p.dtype, out.data(), worst) << " (" << worst_ratio << "x tolerance)";
  return text.str();
}

std::string compare_bytes(const char* what, const std::vector<std::byte>& want,
                          const std::vector<std::byte>& got, std::size_t element) {
  if (want.size() != got.size()) return std::string(what) + ": wrong size";
  int64_t differing = 0;
  int64_t first = -1;
  for (std::size_t i = 0; i < want.size(); i += element) {
    if (std::memcmp(want.data() + i, got.data() + i, element) != 0) {
      if (first < 0) first = static_cast<int64_t>(i / element);
      ++differing;
    }
  }
  if (differing == 0) return "";
  return std::string(what) + ": " + std::to_string(differing) + " elements differ, first at " +
         std::to_string(first);
}

}  // namespace

int verify_goldens_on_device(const VariantRegistry& registry, const std::string& dir,
                             std::ostream& out) {
  std::string reason;
  if (!device_available(&reason)) {
    out << "no CUDA device: " << reason << "\n";
    return 3;
  }
  std::vector<LoadedGolden> goldens;
  for (const std::string& path : list_goldens(dir)) goldens.push_back(load_golden(path));
  out << "device " << device_description() << ", " << goldens.size() << " goldens from " << dir
      << "\n";
  int passed = 0, failed = 0, skipped = 0;
  for (const LoadedGolden& g : goldens) {
    for (const VariantInfo* variant : registry.family(g.family)) {
      const std::string label = g.name + " / " + variant->name;
      if (const std::string why = unsupported_reason(*variant, g); !why.empty()) {
        out << "skip " << label << ": " << why << "\n";
        ++skipped;
        continue;
      }
      DeviceRunOutcome outcome;
      std::string mismatch;
      if (g.family == PC_FAMILY_PAGED_ATTENTION) {
        AttentionRun run = run_paged_attention(*variant, g.attention);
        outcome = run.outcome;
        if (outcome.disposition == LaunchDisposition::kLaunched) {
          mismatch = compare_attention(g, run.out);
        }
      } else {
        const bool gather = g.family == PC_FAMILY_GATHER_CACHED_KV;
        CopyRun run = gather ? run_gather_cached_kv(*variant, g.copy)
                             : run_reshape_and_cache(*variant, g.copy);
        outcome = run.outcome;
        const std::size_t element = dtype_size(g.dtype);
        if (outcome.disposition == LaunchDisposition::kLaunched) {
          mismatch =
              compare_bytes(gather ? "key" : "key_cache", g.expected_first, run.first, element);
          const std::string second = compare_bytes(gather ? "value" : "value_cache",
                                                   g.expected_second, run.second, element);
          mismatch += (mismatch.empty() || second.empty() ? "" : "; ") + second;
        }
      }
      if (outcome.disposition == LaunchDisposition::kNotSupported) {
        out << "skip " << label << ": variant refused: " << outcome.message << "\n";
        ++skipped;
        continue;
      }
      if (outcome.disposition != LaunchDisposition::kLaunched) {
        mismatch = "launch failed: " + outcome.message;
      }
      if (!outcome.guards_intact) {
        mismatch += (mismatch.empty() ? "" : "; ") + ("guard zone: " + outcome.guard_report);
      }
      if (mismatch.empty()) {
        out << "ok   " << label << "\n";
        ++passed;
      } else {
        out << "FAIL " << label << ": " << mismatch << "\n";
        ++failed;
      }
      if (outcome.sticky_error) {
        out << "the CUDA context is unusable after " << label << "; stopping\n";
        return 3;
      }
    }
  }
  out << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace pagecheck::verify::golden
