#pragma once
/// Runtime -> compile-time dispatch of the copy kernels' codec, and the vectorized kernels'
/// grid. Six codecs per kernel: raw copies of 1, 2 and 4 bytes (float16 and bfloat16 share the
/// 2-byte one; fp8 codes the 1-byte one) and fp8 conversions with float32, float16 and bfloat16
/// tokens (E4M3 / E5M2 is a run-time flag).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/kernel_status.h"
#include "copy/copy_codec.cuh"
#include "copy/copy_kernels.cuh"
#include "copy/copy_params.h"
#include "copy/copy_plan.h"

namespace pagecheck::kernels {

/// Carries a codec type through a generic lambda.
template <typename C>
struct CodecTag {
  using type = C;
};

/// True for the two fp8 dtypes.
inline bool is_fp8(pc_dtype dtype) {
  return dtype == PC_DTYPE_FP8_E4M3 || dtype == PC_DTYPE_FP8_E5M2;
}

/// Calls f(CodecTag<codec>{}) for the codec of `key`; unsupported for any other pair.
template <typename F>
KernelStatus dispatch_copy_codec(const CopyCodecKey& key, F&& f) {
  if (key.token == key.cache) {
    switch (key.cache) {
      case PC_DTYPE_FLOAT32:
        return f(CodecTag<copy_detail::RawCodec<4>>{});
      case PC_DTYPE_FLOAT16:
      case PC_DTYPE_BFLOAT16:
        return f(CodecTag<copy_detail::RawCodec<2>>{});
      case PC_DTYPE_FP8_E4M3:
      case PC_DTYPE_FP8_E5M2:
        return f(CodecTag<copy_detail::RawCodec<1>>{});
    }
  } else if (is_fp8(key.cache)) {
    switch (key.token) {
      case PC_DTYPE_FLOAT32:
        return f(CodecTag<copy_detail::Fp8Codec<float>>{});
      case PC_DTYPE_FLOAT16:
        return f(CodecTag<copy_detail::Fp8Codec<__half>>{});
      case PC_DTYPE_BFLOAT16:
        return f(CodecTag<copy_detail::Fp8Codec<__nv_bfloat16>>{});
      default:
        break;
    }
  }
  return KernelStatus::unsupported(
      "unsupported copy: token dtype " + std::to_string(static_cast<int>(key.token)) +
      " with cache dtype " + std::to_string(static_cast<int>(key.cache)));
}

/// Carries a CopyPath through a generic lambda.
template <copy_detail::CopyPath P>
struct PathTag {
  static constexpr copy_detail::CopyPath value = P;
};

/// Calls f(PathTag<path>{}) for the path of `p` (copy_detail::copy_path).
template <typename F>
KernelStatus dispatch_copy_path(const CopyParams& p, F&& f) {
  switch (copy_detail::copy_path(p)) {
    case copy_detail::CopyPath::kVector:
      return f(PathTag<copy_detail::CopyPath::kVector>{});
    case copy_detail::CopyPath::kXSplit:
      return f(PathTag<copy_detail::CopyPath::kXSplit>{});
    case copy_detail::CopyPath::kGeneric:
      break;
  }
  return f(PathTag<copy_detail::CopyPath::kGeneric>{});
}

/// A copy kernel (every copy kernel takes the CopyParams by value).
using CopyKernel = void (*)(CopyParams);

/// Grid of the vectorized kernels for chunks of `chunk_dims` dims (checked to fit on the host).
inline dim3 copy_grid(const CopyParams& p, int chunk_dims) {
  return dim3(static_cast<unsigned>(copy_detail::grid_blocks(p, chunk_dims)), 1, 1);
}

/// Launches a vectorized copy with p.unroll items per thread (1, or the family's large unroll):
/// the staged x-split kernel where copy_detail::staged(p), else the vectorized kernel of p's
/// path. Family is a CopyFamily (copy_family.cuh): vectorized<Codec, kU, kPath>(),
/// staged<Codec, kU>() and kName.
template <typename Family, typename Codec>
KernelStatus launch_vectorized_copy(const CopyParams& p, cudaStream_t stream) {
  constexpr int kLarge = copy_detail::large_unroll(Codec::kTokenBytes, Codec::kCacheBytes);
  if (p.unroll != 1 && p.unroll != kLarge) {
    return KernelStatus::invalid(std::string(Family::kName) + ": unroll " +
                                 std::to_string(p.unroll) + " is neither 1 nor " +
                                 std::to_string(kLarge));
  }
  const dim3 grid = copy_grid(p, copy_detail::kChunkDims<Codec>);
  return dispatch_copy_path(p, [&](auto path_tag) {
    constexpr copy_detail::CopyPath kPath = decltype(path_tag)::value;
    const bool large = p.unroll == kLarge;
    CopyKernel kernel = nullptr;
    int threads = copy_detail::kTileThreads;
    if constexpr (kPath == copy_detail::CopyPath::kXSplit && copy_detail::kStagedXSplit) {
      kernel =
          large ? Family::template staged<Codec, kLarge>() : Family::template staged<Codec, 1>();
    } else {
      kernel = large ? Family::template vectorized<Codec, kLarge, kPath>()
                     : Family::template vectorized<Codec, 1, kPath>();
      threads = copy_detail::tile_threads(p.unroll);
    }
    kernel<<<grid, threads, 0, stream>>>(p);
    PAGECHECK_RETURN_IF_LAUNCH_FAILED(Family::kName);
    return KernelStatus::success();
  });
}

/// Launches a copy of one family (Family as for launch_vectorized_copy, plus scalar<Codec>(),
/// its one-thread-per-element kernel).
template <typename Family>
KernelStatus launch_copy(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                         cudaStream_t stream) {
  if (p.num_tokens == 0) return KernelStatus::success();
  return dispatch_copy_codec(codec, [&](auto codec_tag) {
    using Codec = typename decltype(codec_tag)::type;
    if (variant != CopyVariant::kScalar) return launch_vectorized_copy<Family, Codec>(p, stream);
    const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
    const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
    Family::template scalar<Codec>()<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
    PAGECHECK_RETURN_IF_LAUNCH_FAILED(Family::kScalarName);
    return KernelStatus::success();
  });
}

}  // namespace pagecheck::kernels
