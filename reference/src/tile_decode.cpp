/// Exact tile decoders of the reference (see tile_decode.h).
#include "tile_decode.h"

#include <Eigen/Core>

#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PAGECHECK_HAVE_X86 1
#endif

namespace pagecheck::ref::detail {
namespace {

/// Exact float16 -> float for all 65536 bit patterns, built once through Eigen::half.
const float* float16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> values(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      values[bits] =
          static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(bits)));
    }
    return values;
  }();
  return table.data();
}

/// One element of a raw buffer, exactly, as double.
template <DType kType>
inline double element(const std::byte* base, int64_t index, const float* table) {
  if constexpr (kType == DType::kFloat32) {
    float value;
    std::memcpy(&value, base + index * 4, sizeof value);
    return value;
  } else {
    uint16_t bits;
    std::memcpy(&bits, base + index * 2, sizeof bits);
    if constexpr (kType == DType::kFloat16) {
      return table[bits];
    } else {
      const uint32_t wide = static_cast<uint32_t>(bits) << 16;  // bfloat16 = upper half
      float value;
      std::memcpy(&value, &wide, sizeof value);
      return value;
    }
  }
}

template <DType kType>
void key_tile(const PagedCacheLayout& c, const std::byte* cache, int64_t block, int64_t head,
              int64_t rows, double* dst) {
  constexpr int64_t kX = kType == DType::kFloat32 ? 4 : 8;  // 16 bytes / element size
  const float* table = kType == DType::kFloat16 ? float16_table() : nullptr;
  const int64_t hs = c.head_size;
  for (int64_t g = 0; g < hs / kX; ++g) {  // source order: group, slot, lane
    const int64_t group_base = c.key_offset(block, head, g * kX, 0);
    for (int64_t slot = 0; slot < rows; ++slot) {
      const int64_t base = group_base + slot * c.key_stride_slot;
      double* out = dst + slot * hs + g * kX;
      for (int64_t e = 0; e < kX; ++e) out[e] = element<kType>(cache, base + e, table);
    }
  }
}

template <DType kType>
void value_tile(const PagedCacheLayout& c, const std::byte* cache, int64_t block, int64_t head,
                int64_t cols, double* dst) {
  const float* table = kType == DType::kFloat16 ? float16_table() : nullptr;
  for (int64_t d = 0; d < c.head_size; ++d) {
    const int64_t base = c.value_offset(block, head, d, 0);
    double* out = dst + d * c.block_size;
    for (int64_t slot = 0; slot < cols; ++slot)
      out[slot] = element<kType>(cache, base + slot, table);
  }
}

#ifdef PAGECHECK_HAVE_X86
/// Eight float16 values at `src` to eight doubles at `dst`, with vcvtph2ps (exact).
__attribute__((target("avx,f16c"))) inline void f16c_eight(const std::byte* src, double* dst) {
  const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  _mm256_storeu_pd(dst, _mm256_cvtps_pd(_mm256_castps256_ps128(wide)));
  _mm256_storeu_pd(dst + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(wide, 1)));
}

__attribute__((target("avx,f16c"))) void key_tile_f16c(const PagedCacheLayout& c,
                                                       const std::byte* cache, int64_t block,
                                                       int64_t head, int64_t rows, double* dst) {
  const int64_t hs = c.head_size;
  for (int64_t g = 0; g < hs / 8; ++g) {
    const int64_t group_base = c.key_offset(block, head, g * 8, 0);
    for (int64_t slot = 0; slot < rows; ++slot) {
      f16c_eight(cache + (group_base + slot * c.key_stride_slot) * 2, dst + slot * hs + g * 8);
    }
  }
}

__attribute__((target("avx,f16c"))) void value_tile_f16c(const PagedCacheLayout& c,
                                                         const std::byte* cache, int64_t block,
                                                         int64_t head, int64_t cols, double* dst) {
  for (int64_t d = 0; d < c.head_size; ++d) {
    const std::byte* src = cache + c.value_offset(block, head, d, 0) * 2;
    double* out = dst + d * c.block_size;
    int64_t slot = 0;
    for (; slot + 8 <= cols; slot += 8) f16c_eight(src + slot * 2, out + slot);
    for (; slot < cols; ++slot) {
      uint16_t bits;
      std::memcpy(&bits, src + slot * 2, sizeof bits);
      out[slot] = _cvtsh_ss(bits);
    }
  }
}

/// F16C is used when the CPU has it, unless PAGECHECK_REFERENCE_NO_F16C is set (which tests
/// use to exercise the table path).
bool cpu_has_f16c() {
  static const bool has = std::getenv("PAGECHECK_REFERENCE_NO_F16C") == nullptr &&
                          __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}
#else
bool cpu_has_f16c() {
  return false;
}
#endif

}  // namespace

bool float16_uses_f16c() {
  return cpu_has_f16c();
}

void decode_key_tile(DType dtype, const PagedCacheLayout& c, const std::byte* key_cache,
                     int64_t block, int64_t head, int64_t rows, double* dst) {
  switch (dtype) {
    case DType::kFloat32:
      return key_tile<DType::kFloat32>(c, key_cache, block, head, rows, dst);
    case DType::kFloat16:
#ifdef PAGECHECK_HAVE_X86
      if (cpu_has_f16c()) return key_tile_f16c(c, key_cache, block, head, rows, dst);
#endif
      return key_tile<DType::kFloat16>(c, key_cache, block, head, rows, dst);
    case DType::kBFloat16:
      return key_tile<DType::kBFloat16>(c, key_cache, block, head, rows, dst);
  }
}

void decode_value_tile(DType dtype, const PagedCacheLayout& c, const std::byte* value_cache,
                       int64_t block, int64_t head, int64_t cols, double* dst) {
  switch (dtype) {
    case DType::kFloat32:
      return value_tile<DType::kFloat32>(c, value_cache, block, head, cols, dst);
    case DType::kFloat16:
#ifdef PAGECHECK_HAVE_X86
      if (cpu_has_f16c()) return value_tile_f16c(c, value_cache, block, head, cols, dst);
#endif
      return value_tile<DType::kFloat16>(c, value_cache, block, head, cols, dst);
    case DType::kBFloat16:
      return value_tile<DType::kBFloat16>(c, value_cache, block, head, cols, dst);
  }
}

void prefetch_key_tile(DType dtype, const PagedCacheLayout& c, const std::byte* key_cache,
                       int64_t block, int64_t head) {
  const int64_t size = static_cast<int64_t>(dtype_size(dtype));
  const int64_t bytes = (c.key_offset(0, 0, c.head_size - 1, c.block_size - 1) + 1) * size;
  const std::byte* key = key_cache + c.key_offset(block, head, 0, 0) * size;
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(key + o);
}

void prefetch_value_tile(DType dtype, const PagedCacheLayout& c, const std::byte* value_cache,
                         int64_t block, int64_t head) {
  const int64_t size = static_cast<int64_t>(dtype_size(dtype));
  const int64_t bytes = (c.value_offset(0, 0, c.head_size - 1, c.block_size - 1) + 1) * size;
  const std::byte* value = value_cache + c.value_offset(block, head, 0, 0) * size;
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(value + o);
}

}  // namespace pagecheck::ref::detail
