#pragma once
/// Raw buffers filled with one element pattern (internal, shared by the materializers).
#include <cstdint>
#include <vector>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::verify::gen::detail {

/// Fills a whole raw buffer of `dtype` elements with the bit pattern `bits` (its low
/// dtype_size bytes).
void fill_bits(DType dtype, std::vector<std::byte>& buffer, uint32_t bits);
/// `elements` elements of `dtype`, each holding `bits`.
std::vector<std::byte> poisoned_buffer(DType dtype, int64_t elements, uint32_t bits);
/// The scale of KV head `head` in `scales` (one per tensor or one per head; 1 when empty).
inline double scale_at(const std::vector<float>& scales, int64_t head) {
  if (scales.empty()) return 1.0;
  return scales.size() == 1 ? scales[0] : scales.at(static_cast<std::size_t>(head));
}

}  // namespace pagecheck::verify::gen::detail
