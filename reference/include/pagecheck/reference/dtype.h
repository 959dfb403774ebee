#pragma once
/// Storage element types shared by the reference, the kernels' host side and the tools.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pagecheck {

/// Storage dtype of a tensor. The numeric values match `pc_dtype` in `pagecheck/plugin.h`.
enum class DType : int32_t {
  kFloat32 = 0,   ///< IEEE binary32
  kFloat16 = 1,   ///< IEEE binary16
  kBFloat16 = 2,  ///< bfloat16 (upper half of a binary32)
};

/// Bytes per element.
std::size_t dtype_size(DType dtype);
/// Elements per 16-byte vector of the key cache's innermost dimension (x = 16 / element size).
int64_t dtype_x(DType dtype);
/// "float32", "float16" or "bfloat16".
const char* dtype_name(DType dtype);
/// Parses a dtype name (also accepts "fp32", "fp16", "bf16", "f32", "f16", "half");
/// throws std::invalid_argument naming the text otherwise.
DType parse_dtype(std::string_view text);

/// Reads element `index` of a raw storage buffer, converting exactly to double.
double load_element(DType dtype, const std::byte* base, int64_t index);
/// Writes `value` as element `index` of a raw storage buffer, rounding to nearest even.
void store_element(DType dtype, std::byte* base, int64_t index, double value);

}  // namespace pagecheck
