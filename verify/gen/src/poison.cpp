/// Poison fills and the fast pattern fill. The poison patterns themselves are the dtype
/// table's (DTypeInfo::poison_bits / output_poison_bits).
#include <algorithm>
#include <cstring>

#include "buffers.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::verify::gen {

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

namespace detail {

void fill_bits(DType dtype, std::vector<std::byte>& buffer, uint32_t bits) {
  // The element's bytes are the low bytes of `bits`, little-endian (as every target stores).
  std::byte pattern[4];
  for (std::size_t i = 0; i < 4; ++i) pattern[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xff);
  fill_pattern(buffer.data(), buffer.size(), pattern, dtype_size(dtype));
}

std::vector<std::byte> poisoned_buffer(DType dtype, int64_t elements, uint32_t bits) {
  std::vector<std::byte> buffer(static_cast<std::size_t>(elements) * dtype_size(dtype));
  fill_bits(dtype, buffer, bits);
  return buffer;
}

}  // namespace detail
}  // namespace pagecheck::verify::gen
