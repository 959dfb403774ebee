#pragma once
/// The one tolerance entry point of the harness: the per-element bound of an attention kernel's
/// output against the float64 reference, derived in docs/tolerances.md from the storage
/// dtype's rounding and float32 accumulation, under a precision model. `pagecheck verify`,
/// the golden checks and the GPU tests all call attention_tolerance() (with
/// compare_attention(), attention_comparison.h); nothing else bounds attention errors.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::verify {

/// Unit roundoff (half an ulp of 1) of a dtype: 2^-24 (float32), 2^-11 (float16), 2^-8
/// (bfloat16).
double unit_roundoff(DType dtype);
/// Spacing of the dtype's representable numbers at magnitude `magnitude` (>= 0), including
/// the subnormal range.
double ulp(DType dtype, double magnitude);

/// Constants of the error model. For output element (s, h, d), with p_t the exact softmax
/// weights, v_t the values, o the exact output, l_t the logits, m their max, T the context
/// length, D the head size, u = 2^-24 and u_s the storage dtype's unit roundoff:
///   S1 = sum p_t |v_t|, S2 = sum p_t |v_t - o|, S3 = sum p_t |l_t - m| |v_t - o|,
///   L  = max_t (scale * sum_i |q_i k_ti| + |alibi_t|),    V = max_t |v_t|,
///   a  = safety * [ u (2T + 16) S1 + (2 u (D + 4) L + c_exp u) S2 + c_arg u S3
///                   + c_mid u_s S1 + (c_mid eta_s + 2^-126) T V ]
///   tol = a + ulp_s(|o| + a) / 2
/// The default model is the kernel that computes in float32 and rounds to the storage dtype
/// once, at the end (c_mid = 0). A kernel that keeps softmax weights, weight*value products or
/// per-partition outputs in the storage dtype (as some serving engines do) needs c_mid = 3;
/// eta_s (2^-25 for float16, else 2^-126) bounds the absolute rounding of one tiny weight.
struct ToleranceModel {
  double c_mid = 0.0;   ///< roundings to the storage dtype inside the kernel
  double c_exp = 8.0;   ///< exp, subtraction of the max and normalization, in units of u
  double c_arg = 4.0;   ///< growth of the fast exp's error with |l - m|, in units of u
  double safety = 2.0;  ///< factor on the accumulated bound (not on the final rounding)

  /// "float32 accumulation, one final rounding (c_mid=0, c_exp=8, c_arg=4, safety=2)": the
  /// model's name and parameters as recorded in reports and verification records.
  std::string describe() const;
};

/// The per-element tolerance [num_seqs, num_heads, head_size] of `problem` given its float64
/// reference result. Throws std::runtime_error when the reference output is not finite.
/// `num_threads` 0 = hardware concurrency.
std::vector<double> attention_tolerance(const ref::PagedAttentionProblem& problem,
                                        const ref::PagedAttentionResult& reference,
                                        const ToleranceModel& model = {}, int num_threads = 0);

}  // namespace pagecheck::verify
