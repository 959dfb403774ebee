#pragma once
/// Attention features and strides of drawn cases (internal): sinks, sliding window, soft-cap,
/// causality and the query / output strides, each only where the variant declares it; and the
/// regime's logit scales the sink and soft-cap edges (and their tags) are measured against.
#include <cstdint>
#include <vector>

#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen::detail {

/// About the largest |logit| of a regime: 10, or 1e4 for the extreme one. A sink 20 beyond it
/// is "far" (exp(20) ~ 5e8 against every token together).
double logit_bound(Regime regime);
/// Distance beyond logit_bound at which a sink counts as far above / below.
constexpr double kFarSink = 20.0;
/// A typical spread of a regime's logits: a soft-cap below it changes the softmax visibly.
double logit_spread(Regime regime);

/// [num_heads] sink logits: moderate, far above or far below the logits, or a mix per head.
std::vector<float> draw_sinks(int64_t num_heads, Regime regime);
/// A sliding window for the drawn contexts: 1, the context of a sequence, beyond every
/// context, ending on a block edge of a sequence, or random.
int64_t draw_window(const AttentionSpec& spec);
/// A soft-cap below the regime's spread, typical of served models (5-50), or large.
float draw_soft_cap(Regime regime);
/// Query strides (token stride with packed heads, as a fused QKV slice; padded heads) and
/// output strides, as the variant's PC_CAP_TOKEN_STRIDE / HEAD_STRIDE / STRIDED_OUTPUT allow.
void draw_token_strides(const VariantCaps& caps, AttentionSpec& spec);

}  // namespace pagecheck::verify::gen::detail
