#pragma once
/// Robust statistics of timing samples: median, quartiles and noise (IQR / median), the numbers
/// every bandwidth report and comparison is built from.
#include <cstdint>
#include <vector>

namespace pagecheck::bench {

/// Summary of a set of samples (all in the same unit, e.g. microseconds).
struct SampleSummary {
  int64_t samples = 0;  ///< number of samples
  double median = 0;    ///< 50th percentile
  double q1 = 0;        ///< 25th percentile
  double q3 = 0;        ///< 75th percentile
  double min = 0;       ///< smallest sample
  double max = 0;       ///< largest sample
  double mean = 0;      ///< arithmetic mean
  double noise = 0;     ///< relative spread: (q3 - q1) / median (0 when median is 0)
};

/// Quantile `q` in [0, 1] of ascending `sorted` samples, linearly interpolated between the
/// closest ranks (the "type 7" definition of R and NumPy). Throws std::invalid_argument when
/// `sorted` is empty or q is outside [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Summarizes `samples` (any order). Throws std::invalid_argument when there are none or one
/// is negative, NaN or infinite.
SampleSummary summarize(std::vector<double> samples);

}  // namespace pagecheck::bench
