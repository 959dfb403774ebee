/// Runtime -> compile-time dispatch of the v3_gqa launchers (instantiated in the generated
/// gqa_h<N>.cu files; only declared here).
#include "attention_gqa/gqa_host.h"
#include "attention_gqa/gqa_launch.h"
#include "attention_gqa/gqa_tc_traits.h"
#include "attention_gqa/gqa_traits.h"
#include "common/dispatch.h"

namespace pagecheck::kernels {

KernelStatus dispatch_gqa(int64_t head_size, int rows_per_block, const GqaParams& params,
                          cudaStream_t stream) {
  return dispatch_head_size(head_size, [&](auto head_tag) {
    constexpr int kHead = decltype(head_tag)::value;
    if (rows_per_block == kGqaTensorCoreRows) {
      const bool fp8 = params.kv_dtype == PC_DTYPE_FP8_E4M3 || params.kv_dtype == PC_DTYPE_FP8_E5M2;
      if (params.io_dtype == PC_DTYPE_FLOAT16) {
        return fp8 ? launch_gqa_tc<kHead, __half, uint8_t>(params, stream)
                   : launch_gqa_tc<kHead, __half, __half>(params, stream);
      }
      if (params.io_dtype == PC_DTYPE_BFLOAT16) {
        return fp8 ? launch_gqa_tc<kHead, __nv_bfloat16, uint8_t>(params, stream)
                   : launch_gqa_tc<kHead, __nv_bfloat16, __nv_bfloat16>(params, stream);
      }
      return KernelStatus::invalid("v3_gqa: tensor cores need float16 or bfloat16 queries");
    }
    switch (rows_per_block) {
      case 4:
        return launch_gqa<kHead, 4>(params, stream);
      case 8:
        return launch_gqa<kHead, 8>(params, stream);
    }
    return KernelStatus::invalid("v3_gqa: unsupported rows per block " +
                                 std::to_string(rows_per_block));
  });
}

int64_t gqa_smem_bytes(int64_t head_size, int rows_per_block, bool fp8) {
  int64_t bytes = 0;
  (void)dispatch_head_size(head_size, [&](auto head_tag) {
    constexpr int kHead = decltype(head_tag)::value;
    bytes = rows_per_block == kGqaTensorCoreRows ? (fp8 ? gqa::GqaTcTraits<kHead, 1>::kSmemBytes
                                                        : gqa::GqaTcTraits<kHead, 2>::kSmemBytes)
            : rows_per_block <= 4                ? gqa::GqaTraits<kHead, 4>::kSmemBytes
                                                 : gqa::GqaTraits<kHead, 8>::kSmemBytes;
    return KernelStatus::success();
  });
  return bytes;
}

}  // namespace pagecheck::kernels
