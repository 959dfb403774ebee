/// Median, quartiles and noise of timing samples.
#include "pagecheck/bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pagecheck::bench {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample set");
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("quantile " + std::to_string(q) + " outside [0, 1]");
  }
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SampleSummary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("cannot summarize zero samples");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i]) || samples[i] < 0) {
      throw std::invalid_argument("sample " + std::to_string(i) + " is " +
                                  std::to_string(samples[i]) +
                                  " (samples must be finite and non-negative)");
    }
  }
  std::sort(samples.begin(), samples.end());
  SampleSummary s;
  s.samples = static_cast<int64_t>(samples.size());
  s.median = quantile_sorted(samples, 0.5);
  s.q1 = quantile_sorted(samples, 0.25);
  s.q3 = quantile_sorted(samples, 0.75);
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.samples);
  s.noise = s.median > 0 ? (s.q3 - s.q1) / s.median : 0.0;
  return s;
}

}  // namespace pagecheck::bench
