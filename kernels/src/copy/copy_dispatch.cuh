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

/// Grid of the vectorized kernels for chunks of `chunk_dims` dims (checked to fit on the host).
inline dim3 copy_grid(const CopyParams& p, int chunk_dims) {
  return dim3(static_cast<unsigned>(copy_detail::grid_blocks(p, chunk_dims)), 1, 1);
}

}  // namespace pagecheck::kernels
