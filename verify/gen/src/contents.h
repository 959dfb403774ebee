#pragma once
/// Counter-based random contents (internal): every element's value depends only on the content
/// seed, a tensor tag and the element's logical coordinates, never on layout or visit order.
#include <cmath>
#include <cstdint>

namespace pagecheck::verify::gen::detail {

/// Tensor tags mixed into the hash.
enum Tag : uint64_t {
  kTagQuery = 1,
  kTagKey = 2,
  kTagValue = 3,
  kTagDirection = 4,
  kTagDominant = 5,
  kTagOldKey = 6,
  kTagOldValue = 7,
  kTagBeta = 8,
  kTagLevel = 9,
};

/// SplitMix64 finalizer.
inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Hash of (seed, tag, a, b, c, d).
inline uint64_t hash(uint64_t seed, uint64_t tag, uint64_t a, uint64_t b = 0, uint64_t c = 0,
                     uint64_t d = 0) {
  uint64_t h = mix64(seed ^ (tag * 0xd1b54a32d192ed03ull));
  h = mix64(h ^ a);
  h = mix64(h ^ (b + 0x632be59bd9b4e019ull));
  h = mix64(h ^ (c + 0x8cb92ba72f3d8dd7ull));
  return mix64(h ^ (d + 0x2545f4914f6cdd1dull));
}

/// Uniform in [0, 1) from a hash.
inline double unit(uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}
/// Uniform in [-1, 1) from a hash.
inline double symmetric(uint64_t h) {
  return 2.0 * unit(h) - 1.0;
}
/// Mixed sign, magnitude 10^[lo, hi): log-uniform, never zero.
inline double mixed_magnitude(uint64_t h, double lo, double hi) {
  const double mag = std::pow(10.0, lo + (hi - lo) * unit(mix64(h)));
  return (h & 1) ? -mag : mag;
}

}  // namespace pagecheck::verify::gen::detail
