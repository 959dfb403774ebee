/// A quick bandwidth probe of the built-in variants on the shapes of the performance targets
/// (docs/kernels.md, issue "bandwidth reports"). Disabled by default: run it with
/// --gtest_also_run_disabled_tests --gtest_filter='*BandwidthProbe*'. It prints numbers and
/// asserts only that each launch succeeded; `pagecheck bench` is the real measurement (cold
/// L2, many samples, ceilings measured in the same run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "case_builder.h"
#include "gpu_test_support.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::gpu_test {
namespace {

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void probe_attention(int64_t batch, int64_t ctx) {
  const int64_t heads = 40, head = 128;
  const AttentionCase c = Attention("probe", DType::kFloat16, head, 16, heads, heads,
                                    std::vector<int32_t>(batch, static_cast<int32_t>(ctx)), 4);
  const ref::PagedAttentionProblem p = gen::materialize(c.spec);
  const double bytes = 2.0 * batch * ctx * heads * head * 2;
  for (const VariantInfo* v : builtin_registry().family(PC_FAMILY_PAGED_ATTENTION)) {
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) {
      const verify::AttentionRun run = verify::run_paged_attention(*v, p);
      ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
          << run.outcome.message;
      ms.push_back(run.outcome.elapsed_ms);
    }
    const double m = median_ms(ms);
    std::printf(
        "probe attention fp16 h128 b16 heads 40 batch %4lld ctx %5lld %-12s %8.1f us %7.0f GB/s\n",
        static_cast<long long>(batch), static_cast<long long>(ctx), v->name.c_str(), m * 1e3,
        bytes / (m * 1e-3) / 1e9);
  }
}

void probe_copies(int64_t tokens, bool shuffled) {
  const int64_t heads = 40, head = 128, block = 8;
  const int64_t blocks = std::max<int64_t>(1024, (tokens + block - 1) / block);
  gen::CopySpec spec = verify::golden::plain_copy_spec(PC_FAMILY_GATHER_CACHED_KV, DType::kFloat16,
                                                       head, block, heads, blocks, 5);
  spec.regime = gen::Regime::kBits;  // cheap to materialize for GiB caches
  if (shuffled) {
    spec.slot_mapping = verify::golden::distinct_slots(0, blocks * block, tokens, 5);
  } else {
    for (int64_t t = 0; t < tokens; ++t) spec.slot_mapping.push_back(t);
  }
  const double bytes = 2.0 * 2 * tokens * heads * head * 2;  // K and V, read + write
  for (pc_family f : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    spec.family = f;
    const ref::CacheCopyProblem p = gen::materialize(spec);
    for (const VariantInfo* v : builtin_registry().family(f)) {
      std::vector<double> ms;
      for (int i = 0; i < 3; ++i) {
        const verify::CopyRun run = f == PC_FAMILY_GATHER_CACHED_KV
                                        ? verify::run_gather_cached_kv(*v, p)
                                        : verify::run_reshape_and_cache(*v, p);
        ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
            << run.outcome.message;
        ms.push_back(run.outcome.elapsed_ms);
      }
      const double m = median_ms(ms);
      std::printf(
          "probe %-17s fp16 h128 b8 heads 40 tokens %6lld %-10s %-10s %8.1f us %7.0f GB/s\n",
          family_name(f), static_cast<long long>(tokens), shuffled ? "random" : "sequential",
          v->name.c_str(), m * 1e3, bytes / (m * 1e-3) / 1e9);
    }
  }
}

TEST(BandwidthProbe, DISABLED_TargetShapes) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  probe_attention(32, 2048);
  probe_attention(1, 4096);
  probe_copies(64, true);
  probe_copies(4096, true);
  probe_copies(4096, false);
  probe_copies(32768, false);
}

}  // namespace
}  // namespace pagecheck::gpu_test
