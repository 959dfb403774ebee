#pragma once
/// How fp8 caches get their contents (internal, shared by the generators and materialize).
/// A regime draws values up to a known magnitude R (per tensor). The nominal scale of an fp8
/// tensor is R / max_finite, so that codes = value / nominal span the whole fp8 range, the
/// largest at the saturation edge. A drawn scale is nominal * 2^j (j per tensor or per KV head,
/// -8..10, so scales sit below and above 1 and differ by orders of magnitude between heads);
/// materialize multiplies that head's contents by M = 2^j (and an attention query by 1 / M, so
/// the logits stay the regime's), and stores code = quantize(M * value / scale).
#include <cstdint>

#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen::detail {

/// Smallest and largest j of a drawn scale nominal * 2^j.
constexpr int kMinScaleExponent = -8;
constexpr int kMaxScaleExponent = 10;

/// Largest |value| the attention regime draws for the keys (`key`) or values, before scaling.
double attention_magnitude(const AttentionSpec& spec, bool key);
/// Largest |value| a copy case's regime draws for finite contents.
double copy_magnitude(const CopySpec& spec);
/// magnitude / the largest finite value of `kv_dtype`.
double nominal_scale(double magnitude, DType kv_dtype);
/// 2^round(log2(scale / nominal)) clamped to [2^kMinScaleExponent, 2^kMaxScaleExponent]: the
/// multiplier of the contents under `scale` (1 for 16/32-bit caches).
double content_multiplier(float scale, double nominal);

}  // namespace pagecheck::verify::gen::detail
