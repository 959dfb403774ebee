#pragma once
/// Portable random draws of the hand-written cases' tables (spec_tables.cpp). std::mt19937_64's
/// output sequence is fixed by the C++ standard; the standard distributions are not, so the
/// mappings below are our own.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace pagecheck::verify::golden {

/// The random stream of one case.
class CaseRng {
 public:
  explicit CaseRng(uint64_t seed) : engine_(seed) {}

  /// Uniform integer in [0, n), n > 0 (rejection sampling, no modulo bias).
  int64_t index(int64_t n) {
    const uint64_t range = static_cast<uint64_t>(n);
    const uint64_t limit = (std::numeric_limits<uint64_t>::max() / range) * range;
    uint64_t r = engine_();
    while (r >= limit) r = engine_();
    return static_cast<int64_t>(r % range);
  }

  /// The first `count` entries of a random permutation of [0, n) (partial Fisher-Yates).
  std::vector<int64_t> sample(int64_t n, int64_t count) {
    std::vector<int64_t> items(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) items[static_cast<std::size_t>(i)] = i;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = i + index(n - i);
      std::swap(items[static_cast<std::size_t>(i)], items[static_cast<std::size_t>(j)]);
    }
    items.resize(static_cast<std::size_t>(count));
    return items;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace pagecheck::verify::golden
