/// Runtime -> compile-time dispatch of the attention launchers. The launchers are only
/// declared here (extern templates); their instantiations live in the generated files.
#include "attention/attention_host.h"
#include "attention/attention_shapes.h"
#include "common/dispatch.h"
#include "pagecheck/attention_extern.h"

namespace pagecheck::kernels {

KernelStatus dispatch_attention(AttentionVariant variant, pc_dtype dtype, int64_t head_size,
                                int64_t tile, const AttentionParams& params, cudaStream_t stream) {
  if (head_size == kV1WideHeadSize) {
    // v1 only, one tile (attention_shapes.h).
    if (variant == AttentionVariant::kV2Split || tile != kV1WideTile) {
      return KernelStatus::unsupported("unsupported head_size: " + std::to_string(head_size));
    }
    return dispatch_dtype(dtype, [&](auto type_tag) {
      using T = typename decltype(type_tag)::type;
      if (variant == AttentionVariant::kV1SharedQ) {
        return launch_attention_v1<T, kV1WideHeadSize, kV1WideTile, true>(params, stream);
      }
      return launch_attention_v1<T, kV1WideHeadSize, kV1WideTile, false>(params, stream);
    });
  }
  return dispatch_dtype(dtype, [&](auto type_tag) {
    using T = typename decltype(type_tag)::type;
    return dispatch_head_size(head_size, [&](auto head_tag) {
      constexpr int kHead = decltype(head_tag)::value;
      return dispatch_block_size(tile, [&](auto block_tag) {
        constexpr int kBlock = decltype(block_tag)::value;
        switch (variant) {
          case AttentionVariant::kV1Baseline:
            return launch_attention_v1<T, kHead, kBlock, false>(params, stream);
          case AttentionVariant::kV1SharedQ:
            return launch_attention_v1<T, kHead, kBlock, true>(params, stream);
          case AttentionVariant::kV2Split:
            return launch_attention_v2<T, kHead, kBlock>(params, stream);
        }
        return KernelStatus::invalid("unknown attention variant " +
                                     std::to_string(static_cast<int>(variant)));
      });
    });
  });
}

}  // namespace pagecheck::kernels
