#pragma once
/// Value comparisons shared by diff, regen and check.
#include <string>
#include <vector>

#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {

/// For two datasets of the same type and dims: "N of M elements differ, max abs diff D (first
/// at flat index i: a vs b)", or "" when their bytes are equal.
std::string diff_values(const GoldenDataset& a, const GoldenDataset& b);

/// "" when every |got - want| <= rel * max|want| over the finite wants (a max-norm relative
/// bound; equal values, infinities included, pass; NaN fails), otherwise how many elements
/// exceed it and the worst one.
std::string compare_f64(const std::vector<double>& want, const std::vector<double>& got,
                        double rel);

}  // namespace pagecheck::verify::golden
