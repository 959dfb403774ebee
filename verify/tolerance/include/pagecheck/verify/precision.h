#pragma once
/// A variant's declared precision model (issue 13 §2): which accumulators it uses and which
/// intermediates it rounds to the storage dtype (the query / output dtype). It mirrors
/// `pc_precision` of pagecheck/plugin.h field for field; docs/tolerances.md derives the bound
/// of each declaration and attention_tolerance() (tolerance.h) evaluates it. A variant that
/// declares nothing is judged by the strict float32 model (all fields zero).
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pagecheck/plugin.h"

namespace pagecheck::verify {

/// Accumulator of a dot product or weighted sum. The values match `pc_accum`.
enum class Accum : int32_t {
  kFloat32 = 0,  ///< float32 (or wider)
  kStorage = 1,  ///< partial sums in the storage dtype (fp16 / bf16), see storage_sum_terms
};
/// "float32", "storage".
const char* accum_name(Accum accum);
/// Inverse of accum_name; throws std::invalid_argument naming the text.
Accum parse_accum(std::string_view text);

/// How many roundings to the storage dtype (unit roundoff u_s, tiny-value error eta_s) a
/// declaration adds to each path of the error model (docs/tolerances.md, "Declared
/// precision"). attention_tolerance() turns them into the bound; a declaration is accepted
/// when none of its counts exceeds the loosest model's.
struct PrecisionTerms {
  double logit = 0;   ///< roundings of each logit: error n u_s L, acting through S2
  double weight = 0;  ///< roundings of each softmax weight (or partition sum): n u_s max(S1, S2)
  double value = 0;   ///< roundings on each weight*value term's path: n u_s S1
  double tiny = 0;    ///< roundings that may land below the normal range: n eta_s T max(1, V)
};

/// The declaration. All fields zero (the default) is pagecheck's strict float32 model: every
/// intermediate in float32, one rounding to the storage dtype at the end.
struct PrecisionModel {
  Accum qk = Accum::kFloat32;  ///< accumulator of q.k
  Accum pv = Accum::kFloat32;  ///< accumulator of sum_t p_t v_t
  bool round_logits = false;   ///< the scaled q.k is rounded before the softmax
  bool round_weights = false;  ///< softmax weights exp(l - m) (or normalized p) are rounded
  /// weight*value products are rounded before summation (implied by pv = kStorage)
  bool round_products = false;
  bool round_partition_outputs = false;  ///< per-partition outputs are rounded before the merge
  bool round_partition_sums = false;     ///< per-partition max and sum of exp are rounded
  /// A kStorage sum keeps partial sums in the storage dtype over up to this many terms before
  /// they join a float32 sum; 0 = the whole sum in the storage dtype. Must be 0 when neither
  /// accumulator is kStorage.
  int32_t storage_sum_terms = 0;

  /// All zero: pagecheck's own kernels' model.
  static PrecisionModel strict() { return {}; }
  /// The loosest model pagecheck accepts (engine style): softmax weights and per-partition
  /// outputs rounded to the storage dtype, weight*value products summed in the storage dtype
  /// over 8 terms. `pagecheck selftest` catches every planted attention bug under it.
  static PrecisionModel loosest();

  /// True when all fields are zero.
  bool is_strict() const { return *this == PrecisionModel{}; }
  /// Throws std::invalid_argument naming the field: an accumulator outside the enum, a
  /// negative storage_sum_terms, or storage_sum_terms > 0 with no kStorage accumulator.
  void validate() const;
  /// The roundings of this declaration for a q.k of `qk_terms` products (the head size) and
  /// a weighted sum of `pv_terms` terms (the attended keys): a kStorage sum over k terms adds
  /// min(k, terms) roundings on its path (Higham's gamma_k), the whole sum when k = 0.
  PrecisionTerms terms(int64_t qk_terms, int64_t pv_terms) const;
  /// True when no count of terms() exceeds the loosest model's, for any sizes.
  bool accepted() const;
  /// Throws std::invalid_argument when validate() fails or the declaration is looser than
  /// loosest() (naming the path that is looser), so that no declaration can blind the harness.
  void check_accepted() const;
  /// Short name: "float32 strict", or e.g. "engine: weights+partition outputs rounded, 8-term
  /// storage sums of P.V".
  std::string describe() const;

  /// Field-by-field equality.
  bool operator==(const PrecisionModel& o) const {
    return qk == o.qk && pv == o.pv && round_logits == o.round_logits &&
           round_weights == o.round_weights && round_products == o.round_products &&
           round_partition_outputs == o.round_partition_outputs &&
           round_partition_sums == o.round_partition_sums &&
           storage_sum_terms == o.storage_sum_terms;
  }
  bool operator!=(const PrecisionModel& o) const { return !(*this == o); }
};

/// The declaration of an ABI v2 variant (pc_variant.precision); validates it (not
/// acceptance: the verifier calls check_accepted() before any case of the variant runs). Fields
/// past the writer's struct_size count as zero (a smaller, older struct); struct_size 0 reads every
/// field (a zero-filled struct declares the strict model). Throws std::invalid_argument naming the
/// field, also for PC_ROUND_* bits this header does not know.
PrecisionModel from_abi(const pc_precision& precision);
/// The ABI form of a declaration (struct_size set): what a variant written here registers,
/// from_abi's inverse.
pc_precision to_abi(const PrecisionModel& model);

/// {"qk_accum": "float32", "pv_accum": "storage", "rounded": ["weights", ...],
///  "storage_sum_terms": 8}; "rounded" lists PC_ROUND_* names in lower case without the
/// prefix ("logits", "weights", "products", "partition_outputs", "partition_sums").
void to_json(nlohmann::json& j, const PrecisionModel& model);
/// Inverse of to_json (missing keys keep their defaults); throws std::invalid_argument naming
/// an unknown key, accumulator or rounded name, then validates.
void from_json(const nlohmann::json& j, PrecisionModel& model);

}  // namespace pagecheck::verify
