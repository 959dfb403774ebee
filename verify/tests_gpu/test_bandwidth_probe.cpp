/// A quick bandwidth probe of the built-in variants on the shapes of the performance targets
/// (docs/kernels.md, issue "bandwidth reports"). Disabled by default: run it with
/// --gtest_also_run_disabled_tests --gtest_filter='*BandwidthProbe*'. It prints numbers and
/// asserts only that each launch succeeded; `pagecheck bench` is the real measurement (cold
/// L2, many samples, ceilings measured in the same run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "gpu_test_support.h"
#include "pagecheck/reference/problems.h"

namespace pagecheck::gpu_test {
namespace {

/// Fills `buf` with a tiled pattern of finite random float16 values (fast for GiB buffers).
void fill_half(std::vector<std::byte>& buf, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> tile(1 << 16);
  for (std::size_t i = 0; i < tile.size(); i += 2) {
    const double v = std::uniform_real_distribution<double>(-1, 1)(rng);
    store_element(DType::kFloat16, tile.data(), static_cast<int64_t>(i / 2), v == 0 ? 0.5 : v);
  }
  for (std::size_t off = 0; off < buf.size(); off += tile.size()) {
    std::memcpy(buf.data() + off, tile.data(), std::min(tile.size(), buf.size() - off));
  }
}

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void probe_attention(int64_t batch, int64_t ctx) {
  const int64_t heads = 40, head = 128, block = 16;
  ref::PagedAttentionProblem p;
  p.dtype = DType::kFloat16;
  p.num_seqs = batch;
  p.num_heads = heads;
  p.max_blocks_per_seq = (ctx + block - 1) / block;
  p.scale = 0.0884f;
  p.query_layout = ref::TokenLayout::packed(batch, heads, head);
  p.cache = ref::PagedCacheLayout::packed(DType::kFloat16, batch * p.max_blocks_per_seq, heads,
                                          head, block);
  p.query.resize(static_cast<std::size_t>(p.query_layout.span()) * 2);
  p.key_cache.resize(static_cast<std::size_t>(p.cache.key_span()) * 2);
  p.value_cache.resize(static_cast<std::size_t>(p.cache.value_span()) * 2);
  fill_half(p.query, 1);
  fill_half(p.key_cache, 2);
  fill_half(p.value_cache, 3);
  std::vector<int32_t> ids(static_cast<std::size_t>(p.cache.num_blocks));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(4));
  p.block_table = ids;
  p.context_lens.assign(static_cast<std::size_t>(batch), static_cast<int32_t>(ctx));
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
  ref::CacheCopyProblem p;
  p.dtype = DType::kFloat16;
  const int64_t blocks = std::max<int64_t>(1024, (tokens + block - 1) / block);
  p.cache = ref::PagedCacheLayout::packed(DType::kFloat16, blocks, heads, head, block);
  p.key_layout = p.value_layout = ref::TokenLayout::packed(tokens, heads, head);
  std::vector<int64_t> slots(static_cast<std::size_t>(blocks * block));
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int64_t>(i);
  if (shuffled) std::shuffle(slots.begin(), slots.end(), std::mt19937_64(5));
  p.slot_mapping.assign(slots.begin(), slots.begin() + tokens);
  p.key_cache.resize(static_cast<std::size_t>(p.cache.key_span()) * 2);
  p.value_cache.resize(static_cast<std::size_t>(p.cache.value_span()) * 2);
  p.key.resize(static_cast<std::size_t>(p.key_layout.span()) * 2);
  p.value.resize(static_cast<std::size_t>(p.value_layout.span()) * 2);
  fill_half(p.key_cache, 6);
  fill_half(p.value_cache, 7);
  fill_half(p.key, 8);
  fill_half(p.value, 9);
  const double bytes = 2.0 * 2 * tokens * heads * head * 2;  // K and V, read + write
  for (pc_family f : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
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
