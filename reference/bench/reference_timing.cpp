/// Times the CPU reference on the sizing case: 32 sequences of 4096 tokens, 40 heads
/// (MHA), head size 128, block size 16, float16. Not a test; run it by hand:
///   pagecheck_reference_timing [num_threads] [repeats] [num_kv_heads] [dtype] [cache kind]
///                              [context] [sequences]
/// (an fp8 dtype is the cache's, with float16 queries).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <thread>

#include "pagecheck/reference/paged_attention.h"

using namespace pagecheck;

namespace {

/// Fills a buffer with random values (a pool of pre-rounded N(0,1) values, because rounding
/// 1.3G elements one by one would dominate the run).
void fill_random(DType dtype, std::vector<std::byte>& buffer, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t size = dtype_size(dtype);
  std::vector<std::byte> pool(size * 4096);
  for (int i = 0; i < 4096; ++i) store_element(dtype, pool.data(), i, normal(rng));
  const std::size_t elements = buffer.size() / size;
  uint64_t bits = 0;
  for (std::size_t i = 0; i < elements; ++i) {
    if (i % 5 == 0) bits = rng();  // five 12-bit pool indices per draw
    std::memcpy(buffer.data() + size * i, pool.data() + size * (bits & 4095), size);
    bits >>= 12;
  }
}

/// Which float16 decoder the reference uses on this CPU (see reference/src/tile_decode.cpp).
const char* float16_decoder() {
#if defined(__x86_64__)
  if (std::getenv("PAGECHECK_REFERENCE_NO_F16C") != nullptr) return "table";
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c") ? "F16C" : "table";
#else
  return "table";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const int64_t num_heads = 40, head_size = 128, block_size = 16;
  const int64_t ctx = argc > 6 ? std::atoi(argv[6]) : 4096;
  const int64_t num_seqs = argc > 7 ? std::atoi(argv[7]) : 32;
  const int64_t num_kv_heads = argc > 3 ? std::atoi(argv[3]) : num_heads;
  const DType dtype = argc > 4 ? parse_dtype(argv[4]) : DType::kFloat16;
  const ref::CacheKind kind = argc > 5 ? ref::parse_cache_kind(argv[5]) : ref::CacheKind::kXSplit;
  const std::size_t size = dtype_size(dtype);
  const int64_t blocks_per_seq = ctx / block_size;
  std::mt19937_64 rng(7);

  // An fp8 dtype is the cache's (per-tensor scales of 1); its queries are float16.
  const bool fp8 = dtype_info(dtype).fp8;
  ref::PagedAttentionProblem p;
  p.dtype = fp8 ? DType::kFloat16 : dtype;
  p.num_heads = num_heads;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_size)));
  p.query_layout = ref::TokenLayout::packed(num_seqs, num_heads, head_size);
  p.cache = ref::make_cache_layout(
      kind, dtype, {num_seqs * blocks_per_seq, num_kv_heads, head_size, block_size}, {}, false,
      fp8 ? ref::ScaleKind::kPerTensor : ref::ScaleKind::kNone);
  if (fp8) p.k_scale = p.v_scale = {1.0f};
  p.query.resize(p.query_layout.span() * dtype_size(p.dtype));
  p.key_cache.resize(p.cache.key_span() * size);
  p.value_cache.resize(p.cache.value_span() * size);
  fill_random(p.dtype, p.query, rng);
  fill_random(dtype, p.key_cache, rng);
  fill_random(dtype, p.value_cache, rng);
  p.batch.num_seqs = num_seqs;
  p.batch.max_blocks_per_seq = blocks_per_seq;
  p.batch.block_table.resize(num_seqs * blocks_per_seq);
  std::iota(p.batch.block_table.begin(), p.batch.block_table.end(), 0);
  std::shuffle(p.batch.block_table.begin(), p.batch.block_table.end(), rng);
  p.batch.context_lens.assign(num_seqs, static_cast<int32_t>(ctx));

  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t cpu_start = std::clock();
    const auto start = std::chrono::steady_clock::now();
    const ref::PagedAttentionResult result = ref::paged_attention(p, {threads});
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    best = std::min(best, s);
    std::printf("run %d: %.3f s wall, %.3f s cpu (out[0] = %.6f)\n", r, s, cpu, result.out[0]);
  }
  std::printf(
      "paged_attention reference: %lld seqs x %lld tokens, 40/%lld heads, head 128, block 16, %s, "
      "%s, %d threads (hardware %u, float16 via %s): best %.6f s\n",
      static_cast<long long>(num_seqs), static_cast<long long>(ctx),
      static_cast<long long>(num_kv_heads), dtype_name(dtype), ref::cache_kind_name(kind), threads,
      std::thread::hardware_concurrency(), float16_decoder(), best);
  return 0;
}
