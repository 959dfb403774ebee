/// Runtime -> compile-time dispatch of the v3_gqa launchers (instantiated in the generated
/// gqa_h<N>.cu files; only declared here).
#include "attention_gqa/gqa_host.h"
#include "attention_gqa/gqa_launch.h"
#include "attention_gqa/gqa_tc_traits.h"
#include "attention_gqa/gqa_traits.h"
#include "common/dispatch.h"

#include <algorithm>
#include <string>
#include <type_traits>

namespace pagecheck::kernels {

KernelStatus dispatch_gqa(int64_t head_size, const GqaLaunchShape& shape, const GqaParams& params,
                          cudaStream_t stream) {
  return dispatch_head_size(head_size, [&](auto head_tag) {
    constexpr int kHead = decltype(head_tag)::value;
    if (shape.tensor_cores) {
      const bool fp8 = params.kv_dtype == PC_DTYPE_FP8_E4M3 || params.kv_dtype == PC_DTYPE_FP8_E5M2;
      auto launch_rows = [&](auto rows_tag) {
        constexpr int kRows = decltype(rows_tag)::value;
        if (params.io_dtype == PC_DTYPE_FLOAT16) {
          return fp8 ? launch_gqa_tc<kHead, kRows, __half, uint8_t>(params, stream)
                     : launch_gqa_tc<kHead, kRows, __half, __half>(params, stream);
        }
        if (params.io_dtype == PC_DTYPE_BFLOAT16) {
          return fp8 ? launch_gqa_tc<kHead, kRows, __nv_bfloat16, uint8_t>(params, stream)
                     : launch_gqa_tc<kHead, kRows, __nv_bfloat16, __nv_bfloat16>(params, stream);
        }
        return KernelStatus::invalid("v3_gqa: tensor cores need float16 or bfloat16 queries");
      };
      switch (shape.rows_per_block) {
        case kGqaTensorCoreRows:
          return launch_rows(std::integral_constant<int, kGqaTensorCoreRows>{});
        case 2 * kGqaTensorCoreRows:
          return launch_rows(std::integral_constant<int, 2 * kGqaTensorCoreRows>{});
      }
      return KernelStatus::invalid("v3_gqa: unsupported tensor-core rows per block " +
                                   std::to_string(shape.rows_per_block));
    }
    switch (shape.rows_per_block) {
      case 4:
        return launch_gqa<kHead, 4>(params, stream);
      case 8:
        return launch_gqa<kHead, 8>(params, stream);
    }
    return KernelStatus::invalid("v3_gqa: unsupported rows per block " +
                                 std::to_string(shape.rows_per_block));
  });
}

GqaKernelFacts gqa_kernel_facts(int64_t head_size, const GqaLaunchShape& shape, bool fp8) {
  GqaKernelFacts facts;
  (void)dispatch_head_size(head_size, [&](auto head_tag) {
    constexpr int kHead = decltype(head_tag)::value;
    constexpr int kTwoTiles = 2 * kGqaTensorCoreRows;
    auto tensor_core = [&](auto traits) {
      using Tr = decltype(traits);
      facts.smem_bytes = Tr::kSmemBytes;
      facts.blocks_per_sm = std::min(kGqaTcTargetBlocksPerSm, Tr::kMinBlocksPerSm);
    };
    if (shape.tensor_cores) {
      const bool two = shape.rows_per_block > kGqaTensorCoreRows;
      if (fp8) {
        two ? tensor_core(gqa::GqaTcTraits<kHead, 1, kTwoTiles>{})
            : tensor_core(gqa::GqaTcTraits<kHead, 1>{});
      } else {
        two ? tensor_core(gqa::GqaTcTraits<kHead, 2, kTwoTiles>{})
            : tensor_core(gqa::GqaTcTraits<kHead, 2>{});
      }
    } else {
      facts.smem_bytes = shape.rows_per_block <= 4 ? gqa::GqaTraits<kHead, 4>::kSmemBytes
                                                   : gqa::GqaTraits<kHead, 8>::kSmemBytes;
    }
    return KernelStatus::success();
  });
  return facts;
}

}  // namespace pagecheck::kernels
