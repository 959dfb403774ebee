/// Poison patterns and the fast pattern fill.
#include <algorithm>
#include <cstring>

#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::verify::gen {

uint32_t poison_bits(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 0x7fc0dead;  // quiet NaN, payload 0xdead
    case DType::kFloat16:
      return 0x7e5a;  // quiet NaN, payload 0x5a
    case DType::kBFloat16:
      return 0x7fda;  // quiet NaN, payload 0x5a
  }
  return 0;
}

uint32_t output_poison_bits(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 0xffc0beef;  // negative quiet NaN, payload 0xbeef
    case DType::kFloat16:
      return 0xfe33;
    case DType::kBFloat16:
      return 0xffb3;
  }
  return 0;
}

void fill_pattern(std::byte* dst, std::size_t bytes, const void* pattern,
                  std::size_t pattern_bytes) {
  if (bytes == 0) return;
  const std::size_t first = std::min(bytes, pattern_bytes);
  std::memcpy(dst, pattern, first);
  std::size_t filled = first;
  while (filled < bytes) {  // double the filled prefix (whole patterns) until done
    const std::size_t chunk = std::min(filled, bytes - filled);
    std::memcpy(dst + filled, dst, chunk);
    filled += chunk;
  }
}

}  // namespace pagecheck::verify::gen
