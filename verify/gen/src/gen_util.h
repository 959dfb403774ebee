#pragma once
/// Small helpers shared by the generators (internal).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <rapidcheck.h>

#include "ceil_div.h"
#include "contents.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen::detail {

/// The RapidCheck size of the current generation (0..100 by default).
inline int current_size() {
  return *rc::gen::withSize([](int size) { return rc::gen::just(size); });
}

/// A full-range, non-shrinking 64-bit seed (independent of the size).
inline uint64_t draw_seed() {
  return *rc::gen::noShrink(rc::gen::resize(100, rc::gen::arbitrary<uint64_t>()));
}

/// Integer in [lo, hi] (inclusive), shrinking toward lo; hi < lo gives lo.
inline int64_t draw_between(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return *rc::gen::inRange<int64_t>(lo, hi + 1);
}

/// Index i drawn with probability weights[i] / sum(weights), shrinking toward 0 (RapidCheck's
/// own weightedElement / elementOf do not shrink in this version, so choices are drawn here).
/// A single choice draws nothing.
inline std::size_t draw_weighted(const std::vector<std::size_t>& weights) {
  if (weights.size() == 1) return 0;
  std::size_t total = 0;
  for (std::size_t w : weights) total += w;
  const auto uniform =
      rc::gen::noShrink(rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, total)));
  const auto index = rc::gen::map(uniform, [weights](std::size_t r) {
    std::size_t i = 0;
    while (r >= weights[i]) r -= weights[i++];
    return i;
  });
  return *rc::gen::shrink(index,
                          [](std::size_t i) { return rc::shrink::towards<std::size_t>(i, 0); });
}

/// One of `options` (weight, value), shrinking toward the first.
template <typename T>
T pick(std::initializer_list<std::pair<std::size_t, T>> options) {
  std::vector<std::size_t> weights;
  std::vector<T> values;
  for (const auto& [w, v] : options) {
    weights.push_back(w);
    values.push_back(v);
  }
  return values[draw_weighted(weights)];
}

/// A uniformly chosen element of `values`, shrinking toward the first.
template <typename T>
T pick_of(const std::vector<T>& values) {
  return values[draw_weighted(std::vector<std::size_t>(values.size(), 1))];
}

/// A non-empty vector of `count` elements (`count` is drawn once and never shrunk; it must give
/// at least 1) that shrinks like RapidCheck's own containers: first by removing any run of
/// elements (any single one included, keeping at least one), then by shrinking each element on
/// its own. Built from RapidCheck's public shrinking primitives; unlike gen::container it lets
/// the caller weight the length (gen::container draws it uniformly from [0, size]).
template <typename T>
rc::Gen<std::vector<T>> non_empty_vector(rc::Gen<int64_t> count, rc::Gen<T> element) {
  return [count, element](const rc::Random& random, int size) {
    rc::Random r = random;
    const int64_t n = std::max<int64_t>(1, count(r.split(), size).value());
    std::vector<rc::Shrinkable<T>> elements;
    for (int64_t i = 0; i < n; ++i) elements.push_back(element(r.split(), size));
    using Elements = std::vector<rc::Shrinkable<T>>;
    const auto shrinks = [](const Elements& e) {
      return rc::seq::concat(
          rc::seq::filter(rc::shrink::removeChunks(e),
                          [](const Elements& s) { return !s.empty(); }),
          rc::shrink::eachElement(e, [](const rc::Shrinkable<T>& s) { return s.shrinks(); }));
    };
    return rc::shrinkable::map(rc::shrinkable::shrinkRecur(std::move(elements), shrinks),
                               [](const Elements& e) {
                                 std::vector<T> values;
                                 for (const auto& s : e) values.push_back(s.value());
                                 return values;
                               });
  };
}

/// Primes up to `limit` (at least {2}).
inline std::vector<int64_t> primes_up_to(int64_t limit) {
  std::vector<int64_t> primes;
  for (int64_t p : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47}) {
    if (p <= limit || primes.empty()) primes.push_back(p);
  }
  return primes;
}

/// A deterministic hash of (seed, i) (SplitMix64's i-th output from `seed`; not shrunk).
inline uint64_t mix_index(uint64_t seed, int64_t i) {
  return mix64(seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i));
}

/// Fisher-Yates permutation of [0, n) from `seed` (deterministic, not shrunk).
inline std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(n);
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  std::mt19937_64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<int64_t> pick(0, i);
    std::swap(p[i], p[pick(rng)]);
  }
  return p;
}

/// The token dtypes a case may use: the declared ones that have a cache dtype, or only the
/// 16-bit ones among them (when any) for large caches, which halves their memory.
std::vector<DType> dtypes_for(const VariantCaps& caps, bool large);
/// The cache dtypes a case of caps.family with tokens of `dtype` may use (a gather converts
/// only with PC_CAP_DEQUANTIZE; fp8 tokens never convert: their cache is of their own dtype).
std::vector<DType> kv_options(const VariantCaps& caps, DType dtype);

/// True when `values` holds `v`.
template <typename T>
bool contains(const std::vector<T>& values, const T& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

/// Smallest block count whose cache (stride_block elements per block) spans more than 2^31
/// elements, plus `referenced` blocks above that offset.
int64_t large_pool_blocks(int64_t stride_block, int64_t referenced);

}  // namespace pagecheck::verify::gen::detail
