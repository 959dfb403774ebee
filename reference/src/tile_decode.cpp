/// Exact tile decoders of the reference (see tile_decode.h).
#include "tile_decode.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PAGECHECK_HAVE_X86 1
#endif

namespace pagecheck::ref::detail {
namespace {

/// Offset of tile element (slot, dim) of `tensor` in block `block`, head `head`.
int64_t element_at(const PagedCacheLayout& c, CacheTensor tensor, int64_t block, int64_t head,
                   int64_t slot, int64_t dim) {
  return tensor == CacheTensor::kKey ? c.key_at(block, head, slot, dim)
                                     : c.value_at(block, head, slot, dim);
}

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

/// Exact values of the 256 codes of an fp8 dtype (dequantize_fp8).
template <DType kType>
const double* fp8_table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> values{};
    for (int code = 0; code < 256; ++code) {
      values[code] = dequantize_fp8(kType, static_cast<uint8_t>(code));
    }
    return values;
  }();
  return table.data();
}

/// Decodes `n` consecutive elements from element `src` of `buffer` to out[i * stride].
template <DType kType>
struct ScalarRun {
  const float* f16 = kType == DType::kFloat16 ? float16_table() : nullptr;
  const double* fp8 = kType == DType::kFloat8E4M3   ? fp8_table<DType::kFloat8E4M3>()
                      : kType == DType::kFloat8E5M2 ? fp8_table<DType::kFloat8E5M2>()
                                                    : nullptr;

  void operator()(const std::byte* buffer, int64_t src, int64_t n, double scale, double* out,
                  int64_t stride) const {
    if constexpr (kType == DType::kFloat32) {
      for (int64_t i = 0; i < n; ++i) {
        float value;
        std::memcpy(&value, buffer + (src + i) * 4, sizeof value);
        out[i * stride] = value;
      }
    } else if constexpr (kType == DType::kFloat16 || kType == DType::kBFloat16) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, buffer + (src + i) * 2, sizeof bits);
        if constexpr (kType == DType::kFloat16) {
          out[i * stride] = f16[bits];
        } else {
          const uint32_t wide = static_cast<uint32_t>(bits) << 16;  // bfloat16 = upper half
          float value;
          std::memcpy(&value, &wide, sizeof value);
          out[i * stride] = value;
        }
      }
    } else {
      const auto* codes = reinterpret_cast<const uint8_t*>(buffer) + src;
      for (int64_t i = 0; i < n; ++i) out[i * stride] = fp8[codes[i]] * scale;
    }
  }
};

/// Walks the runs of `plan` that fall in slots [first, last) and hands each to `run` as
/// run(buffer, first element, count, scale, first target double, target step). Full tiles of
/// runs along dims skip the per-run range test; kLength > 0 fixes the run length at compile time.
template <int64_t kLength, typename Run>
__attribute__((always_inline)) inline void walk(const PagedCacheLayout& c, const TilePlan& plan,
                                                const std::byte* buffer, int64_t block,
                                                int64_t head, int64_t first, int64_t last,
                                                double scale, double* dst, const Run& run) {
  const int64_t base = element_at(c, plan.tensor, block, head, 0, 0);
  const int64_t length = kLength > 0 ? kLength : plan.length;
  if (plan.along_slots) {  // one run per dim, clipped to the slot range
    const int64_t shift = first * plan.target.slot_stride;
    for (const TilePlan::Run& r : plan.runs) {
      run(buffer, base + r.offset + first, last - first, scale, dst + r.dst + shift, plan.dst_step);
    }
  } else if (first == 0 && last == c.block_size) {
    for (const TilePlan::Run& r : plan.runs) {
      run(buffer, base + r.offset, length, scale, dst + r.dst, plan.dst_step);
    }
  } else {
    for (const TilePlan::Run& r : plan.runs) {
      if (r.slot < first || r.slot >= last) continue;
      run(buffer, base + r.offset, length, scale, dst + r.dst, plan.dst_step);
    }
  }
}

template <DType kType>
void decode_scalar(const PagedCacheLayout& c, const TilePlan& plan, const std::byte* buffer,
                   int64_t block, int64_t head, int64_t first, int64_t last, double scale,
                   double* dst) {
  walk<0>(c, plan, buffer, block, head, first, last, scale, dst, ScalarRun<kType>{});
}

#ifdef PAGECHECK_HAVE_X86
/// Eight float16 values at `src` to eight doubles at `dst`, with vcvtph2ps (exact).
__attribute__((target("avx,f16c"))) inline void f16c_eight(const std::byte* src, double* dst) {
  const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  _mm256_storeu_pd(dst, _mm256_cvtps_pd(_mm256_castps256_ps128(wide)));
  _mm256_storeu_pd(dst + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(wide, 1)));
}

/// A float16 run through F16C: eight at a time, then one at a time.
struct F16cRun {
  __attribute__((target("avx,f16c"))) void operator()(const std::byte* buffer, int64_t src,
                                                      int64_t n, double, double* out,
                                                      int64_t stride) const {
    const std::byte* p = buffer + src * 2;
    int64_t i = 0;
    if (stride == 1) {
      for (; i + 8 <= n; i += 8) f16c_eight(p + i * 2, out + i);
    } else {
      for (; i + 8 <= n; i += 8) {
        double eight[8];
        f16c_eight(p + i * 2, eight);
        for (int e = 0; e < 8; ++e) out[(i + e) * stride] = eight[e];
      }
    }
    for (; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, p + i * 2, sizeof bits);
      out[i * stride] = _cvtsh_ss(bits);
    }
  }
};

/// Runs of exactly eight consecutive float16 values into eight consecutive doubles (x-split
/// keys): one conversion each.
struct F16cEight {
  __attribute__((target("avx,f16c"))) void operator()(const std::byte* buffer, int64_t src, int64_t,
                                                      double, double* out, int64_t) const {
    f16c_eight(buffer + src * 2, out);
  }
};

__attribute__((target("avx,f16c"))) void decode_f16c(const PagedCacheLayout& c,
                                                     const TilePlan& plan, const std::byte* buffer,
                                                     int64_t block, int64_t head, int64_t first,
                                                     int64_t last, double* dst) {
  if (!plan.along_slots && plan.length == 8 && plan.dst_step == 1) {
    return walk<8>(c, plan, buffer, block, head, first, last, 1.0, dst, F16cEight{});
  }
  walk<0>(c, plan, buffer, block, head, first, last, 1.0, dst, F16cRun{});
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

TilePlan make_tile_plan(const PagedCacheLayout& c, CacheTensor tensor, TileTarget target) {
  const CacheTensorStrides& s = tensor == CacheTensor::kKey ? c.key : c.value;
  const int64_t hs = c.head_size, bs = c.block_size;
  auto at = [&](int64_t slot, int64_t dim) {
    return element_at(c, tensor, 0, 0, slot, dim) - element_at(c, tensor, 0, 0, 0, 0);
  };
  auto run = [&](int64_t slot, int64_t dim) {
    return TilePlan::Run{at(slot, dim), slot * target.slot_stride + dim * target.dim_stride, slot};
  };
  TilePlan plan;
  plan.tensor = tensor;
  plan.target = target;
  if (s.dim == 1 && s.dim_split > 0) {  // dims are consecutive inside each group
    plan.length = s.dim_split;
    plan.dst_step = target.dim_stride;
    for (int64_t slot = 0; slot < bs; ++slot) {
      for (int64_t d = 0; d < hs; d += s.dim_split) plan.runs.push_back(run(slot, d));
    }
  } else if (s.slot == 1) {  // slots are consecutive for each dim
    plan.along_slots = true;
    plan.length = bs;
    plan.dst_step = target.slot_stride;
    for (int64_t d = 0; d < hs; ++d) plan.runs.push_back(run(0, d));
  } else {  // no unit stride: element by element
    for (int64_t slot = 0; slot < bs; ++slot) {
      for (int64_t d = 0; d < hs; ++d) plan.runs.push_back(run(slot, d));
    }
  }
  // Walk memory in address order (the hardware prefetcher follows ascending streams).
  std::stable_sort(
      plan.runs.begin(), plan.runs.end(),
      [](const TilePlan::Run& a, const TilePlan::Run& b) { return a.offset < b.offset; });
  plan.extent = at(bs - 1, hs - 1) + 1;
  plan.compact = plan.extent <= 2 * bs * hs;
  return plan;
}

bool float16_uses_f16c() {
  return cpu_has_f16c();
}

void decode_tile(const PagedCacheLayout& c, const TilePlan& plan, const std::byte* buffer,
                 int64_t block, int64_t head, int64_t first, int64_t last, double scale,
                 double* dst) {
  if (first >= last) return;
  switch (c.dtype) {
    case DType::kFloat32:
      return decode_scalar<DType::kFloat32>(c, plan, buffer, block, head, first, last, scale, dst);
    case DType::kFloat16:
#ifdef PAGECHECK_HAVE_X86
      if (cpu_has_f16c()) return decode_f16c(c, plan, buffer, block, head, first, last, dst);
#endif
      return decode_scalar<DType::kFloat16>(c, plan, buffer, block, head, first, last, scale, dst);
    case DType::kBFloat16:
      return decode_scalar<DType::kBFloat16>(c, plan, buffer, block, head, first, last, scale, dst);
    case DType::kFloat8E4M3:
      return decode_scalar<DType::kFloat8E4M3>(c, plan, buffer, block, head, first, last, scale,
                                               dst);
    case DType::kFloat8E5M2:
      return decode_scalar<DType::kFloat8E5M2>(c, plan, buffer, block, head, first, last, scale,
                                               dst);
  }
}

void prefetch_tile(const PagedCacheLayout& c, const TilePlan& plan, const std::byte* buffer,
                   int64_t block, int64_t head) {
  const int64_t size = static_cast<int64_t>(dtype_size(c.dtype));
  const std::byte* tile = buffer + element_at(c, plan.tensor, block, head, 0, 0) * size;
  if (plan.compact) {
    for (int64_t o = 0; o < plan.extent * size; o += 64) __builtin_prefetch(tile + o);
    return;
  }
  const int64_t run_bytes = plan.length * size;
  for (const TilePlan::Run& r : plan.runs) {
    for (int64_t o = 0; o < run_bytes; o += 64) __builtin_prefetch(tile + r.offset * size + o);
  }
}

}  // namespace pagecheck::ref::detail
