/// Reference-versus-oracle comparison: conditioning-aware tolerances and the storage rule.
#include "pagecheck/verify/oracle_agreement.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pagecheck::verify {
namespace {

constexpr double kUnitRoundoff = std::numeric_limits<double>::epsilon() / 2;

/// Raw bits of one element, widened.
uint32_t element_bits(DType dtype, const std::byte* p) {
  uint32_t bits = 0;
  std::memcpy(&bits, p, dtype_size(dtype));  // little endian: low bytes
  return bits;
}

/// True when no value of the dtype lies strictly between the two (same sign, bits differ by 1).
bool adjacent(DType dtype, uint32_t a, uint32_t b) {
  const uint32_t sign = dtype == DType::kFloat32 ? 0x80000000u : 0x8000u;
  if ((a & sign) != (b & sign)) return false;
  return (a > b ? a - b : b - a) == 1;
}

/// |difference| / tolerance: 0 for equal values (infinities of one sign included), infinite
/// for any other non-finite difference.
double ratio(double a, double b, double tolerance) {
  if (a == b) return 0;
  const double diff = std::fabs(a - b);
  return std::isfinite(diff) ? diff / tolerance : std::numeric_limits<double>::infinity();
}

}  // namespace

double output_tolerance(double expected, int64_t head_size, int64_t attended,
                        double logit_magnitude, double value_magnitude) {
  return kOracleRelTolerance * std::max(std::fabs(expected), kOracleRelFloor) +
         2 * kUnitRoundoff * value_magnitude *
             (std::sqrt(static_cast<double>(head_size)) * logit_magnitude +
              std::sqrt(static_cast<double>(attended)));
}

double lse_tolerance(double expected, int64_t head_size, int64_t attended, double logit_magnitude) {
  return kOracleRelTolerance * std::max(std::fabs(expected), 1.0) +
         2 * kUnitRoundoff *
             (std::sqrt(static_cast<double>(head_size)) * logit_magnitude +
              std::sqrt(static_cast<double>(attended)));
}

bool storage_rounding_agrees(DType dtype, double exact_a, double exact_b, const std::byte* a,
                             const std::byte* b, bool* was_tie) {
  if (was_tie) *was_tie = false;
  if (std::memcmp(a, b, dtype_size(dtype)) == 0) return true;
  const double va = load_element(dtype, a, 0), vb = load_element(dtype, b, 0);
  if (!std::isfinite(va) || !std::isfinite(vb)) return false;
  bool split = false;
  if (va == 0 && vb == 0) {
    split = true;  // +0 and -0: both round a value that is (almost) zero
  } else if (adjacent(dtype, element_bits(dtype, a), element_bits(dtype, b))) {
    const double midpoint = 0.5 * (va + vb);  // exact: few significant bits
    split = std::min(exact_a, exact_b) <= midpoint && midpoint <= std::max(exact_a, exact_b);
  }
  if (was_tie) *was_tie = split;
  return split;
}

bool AttentionAgreement::passed() const {
  return out.num_nonfinite == 0 && out_worst_ratio <= 1 && lse_worst_ratio <= 1 &&
         storage_mismatches == 0;
}

std::string AttentionAgreement::describe() const {
  std::ostringstream s;
  s.precision(3);
  s << "max_rel=" << out.max_rel << " (" << out_worst_ratio << " of tolerance), lse "
    << lse_worst_ratio << " of tolerance, storage: ";
  if (storage_mismatches > 0) {
    s << storage_mismatches << " mismatches (first: " << first_mismatch << ")";
  } else if (storage_ties > 0) {
    s << "identical except " << storage_ties << " split by a rounding midpoint";
  } else {
    s << "identical";
  }
  if (!passed()) s << "; " << out.to_string();
  return s.str();
}

AttentionAgreement compare_with_oracle(const ref::PagedAttentionProblem& problem,
                                       const ref::PagedAttentionResult& reference,
                                       const oracle::OracleAttention& oracle) {
  AttentionAgreement a;
  const int64_t hs = reference.head_size;
  if (reference.num_rows != oracle.num_rows || reference.num_heads != oracle.num_heads ||
      hs != oracle.head_size) {
    throw std::invalid_argument(
        "compare_with_oracle: the reference's shape [" + std::to_string(reference.num_rows) + ", " +
        std::to_string(reference.num_heads) + ", " + std::to_string(hs) +
        "] differs from the oracle's [" + std::to_string(oracle.num_rows) + ", " +
        std::to_string(oracle.num_heads) + ", " + std::to_string(oracle.head_size) + "]");
  }
  const std::vector<double> expected = oracle.out_double();
  a.out = ref::compare(expected, reference.out, {reference.num_rows, reference.num_heads, hs},
                       kOracleRelFloor);
  for (int64_t row = 0; row < reference.num_rows * reference.num_heads; ++row) {
    const int64_t attended = oracle.attended.at(row / reference.num_heads);
    const double logit_mag = static_cast<double>(oracle.logit_magnitude.at(row));
    const double value_mag = static_cast<double>(oracle.value_magnitude.at(row));
    const double lse = static_cast<double>(oracle.lse.at(row));
    a.lse_worst_ratio =
        std::max(a.lse_worst_ratio,
                 ratio(reference.lse.at(row), lse, lse_tolerance(lse, hs, attended, logit_mag)));
    for (int64_t d = 0; d < hs; ++d) {
      const int64_t i = row * hs + d;
      a.out_worst_ratio =
          std::max(a.out_worst_ratio,
                   ratio(reference.out[i], expected[i],
                         output_tolerance(expected[i], hs, attended, logit_mag, value_mag)));
    }
  }
  const std::vector<std::byte> ref_storage = reference.out_storage(problem.dtype);
  ref::PagedAttentionResult oracle_as_result = reference;
  oracle_as_result.out = expected;
  const std::vector<std::byte> oracle_storage = oracle_as_result.out_storage(problem.dtype);
  const std::size_t size = dtype_size(problem.dtype);
  for (std::size_t i = 0; i < reference.out.size(); ++i) {
    bool tie = false;
    if (storage_rounding_agrees(problem.dtype, reference.out[i], expected[i],
                                &ref_storage[i * size], &oracle_storage[i * size], &tie)) {
      a.storage_ties += tie ? 1 : 0;
    } else if (a.storage_mismatches++ == 0) {
      std::ostringstream s;
      s.precision(17);
      s << "element " << i << ": reference " << reference.out[i] << " -> "
        << load_element(problem.dtype, &ref_storage[i * size], 0) << ", oracle " << expected[i]
        << " -> " << load_element(problem.dtype, &oracle_storage[i * size], 0);
      a.first_mismatch = s.str();
    }
  }
  return a;
}

int64_t first_byte_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

}  // namespace pagecheck::verify
