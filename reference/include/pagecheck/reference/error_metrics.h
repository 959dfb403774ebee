#pragma once
/// Error metrics between an expected (float64) and an actual tensor.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pagecheck::ref {

/// Summary of the difference between two tensors of the same shape.
struct ErrorMetrics {
  int64_t count = 0;          ///< elements compared
  int64_t num_nonfinite = 0;  ///< actual elements that are NaN or infinite
  double max_abs = 0;         ///< max |actual - expected|
  double max_rel = 0;         ///< max |actual - expected| / max(|expected|, rel_floor)
  double rel_norm = 0;        ///< ||actual - expected||_2 / max(||expected||_2, tiny)
  int64_t worst_index = -1;   ///< flat index of the element with the largest rel error
  std::array<int64_t, 3> worst_coord{-1, -1, -1};  ///< (seq, head, dim) of that element
  double worst_expected = 0;                       ///< expected value there
  double worst_actual = 0;                         ///< actual value there
  /// One line: "max_abs=… max_rel=… rel_norm=… worst (seq,head,dim)=(…) expected … got …".
  std::string to_string() const;
};

/// Compares dense tensors of shape `shape` (row-major). A NaN or infinite actual counts as an
/// infinite error at its position. `rel_floor` keeps relative errors finite near zero.
ErrorMetrics compare(const std::vector<double>& expected, const std::vector<double>& actual,
                     std::array<int64_t, 3> shape, double rel_floor);

}  // namespace pagecheck::ref
