#pragma once
/// The one tolerance entry point of the harness: the per-element bound of an attention kernel's
/// output against the float64 reference, derived in docs/tolerances.md from the storage
/// dtype's rounding and float32 accumulation, under the variant's declared precision model
/// (precision.h). `pagecheck verify`, the golden checks and the GPU tests all call
/// attention_tolerance() (with compare_attention(), attention_comparison.h); nothing else
/// bounds attention errors.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify {

/// Unit roundoff (half an ulp of 1) of a dtype: 2^-24 (float32), 2^-11 (float16), 2^-8
/// (bfloat16).
double unit_roundoff(DType dtype);
/// Spacing of the dtype's representable numbers at magnitude `magnitude` (>= 0), including
/// the subnormal range.
double ulp(DType dtype, double magnitude);

/// Constants of the error model. For output element (row, h, d), with p_t the exact softmax
/// weights over the row's attended keys (and p_sink of a sink, whose value is 0), v_t the
/// values, o the exact output, l_t the logits, m their max, T the attended keys, D the head
/// size, u = 2^-24 and u_s the storage dtype's unit roundoff:
///   S1 = sum p_t |v_t|, S2 = sum p_t |v_t - o|, S3 = sum p_t |l_t - m| |v_t - o|,
///   L  = max_t (scale * sum_i |q_i k_ti| + |alibi_t|),    V = max_t |v_t|,
///   a  = safety * [ u (2T + 16 + f8) S1 + (2 u (D + 4 + f8) L + c_tanh u cap + c_exp u) S2
///                   + c_arg u S3 + 2^-126 T V ]                         (float32 arithmetic)
///      + expm1(2 d_s) S2 + (n_v S1 + n_w max(S1, S2)) u_s / (1 - (n_v + n_w) u_s)
///      + n_t eta_s T max(1, V),           d_s = n_l (u_s L + eta_s) / (1 - n_l u_s)
///   tol = a + ulp_s(|o| + a) / 2
/// where f8 = 1 for an fp8 cache (dequantization in float32), cap the soft-cap (0 = none),
/// and n_l, n_w, n_v, n_t the declaration's rounding counts (PrecisionModel::terms()). The
/// strict float32 model has n = 0: today's bound. docs/tolerances.md derives every term.
struct ToleranceModel {
  PrecisionModel precision;  ///< the variant's declaration (default: strict float32)
  double c_exp = 8.0;        ///< exp, subtraction of the max and normalization, in units of u
  double c_arg = 4.0;        ///< growth of the fast exp's error with |l - m|, in units of u
  double c_tanh = 8.0;       ///< tanh of a soft-capped logit, in units of u * cap
  double safety = 2.0;       ///< factor on the float32 part (not on declared roundings)

  /// "float32 strict (c_exp=8, c_arg=4, c_tanh=8, safety=2)": the declaration's name and the
  /// constants, as recorded in reports and verification records.
  std::string describe() const;
};

/// {"precision": {...}, "c_exp": 8, "c_arg": 4, "c_tanh": 8, "safety": 2}.
void to_json(nlohmann::json& j, const ToleranceModel& model);

/// The per-element tolerance [num_rows, num_heads, head_size] of `problem` given its float64
/// reference result (one row per query token). The softmax normalizer of each row and head is
/// the reference's own (reference.lse); a row that attends no token (context 0) gets
/// tolerance 0 against the reference's 0. Throws std::runtime_error when the reference output
/// is not finite or its lse disagrees with the logits (so a wrong reference cannot widen the
/// bound), std::invalid_argument when the sizes differ, the precision declaration is invalid
/// or rounds so often on a case (n u_s >= 1/2) that no first-order bound holds. Acceptance
/// (PrecisionModel::check_accepted()) is the verifier's check (before any case runs), not this
/// function's. `num_threads` 0 = hardware concurrency.
std::vector<double> attention_tolerance(const ref::PagedAttentionProblem& problem,
                                        const ref::PagedAttentionResult& reference,
                                        const ToleranceModel& model = {}, int num_threads = 0);

}  // namespace pagecheck::verify
