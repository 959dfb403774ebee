#pragma once
/// Storage element types: one table row per dtype, shared by the reference, the harness and
/// the tools. Every list of dtypes and every per-dtype constant comes from this table.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pagecheck {

/// Storage dtype of a tensor. The numeric values match `pc_dtype` in `pagecheck/plugin.h`.
enum class DType : int32_t {
  kFloat32 = 0,     ///< IEEE binary32
  kFloat16 = 1,     ///< IEEE binary16
  kBFloat16 = 2,    ///< bfloat16 (upper half of a binary32)
  kFloat8E4M3 = 3,  ///< OCP fp8 E4M3 ("e4m3fn": no infinities, NaN = S.1111.111, max 448)
  kFloat8E5M2 = 4,  ///< OCP fp8 E5M2 (IEEE-like: infinities, NaNs, max 57344)
};

/// How a dtype's elements are kept in an HDF5 file.
enum class Hdf5Storage : int32_t {
  kIeeeFloat = 0,  ///< native IEEE float of the element's width (float32; float16 as h5py
                   ///< builds it), readable by h5py as <f4 / <f2
  kBits = 1,     ///< unsigned integers of the element's width holding the bit patterns
};

/// Everything pagecheck knows about one dtype.
struct DTypeInfo {
  DType dtype;       ///< the dtype this row describes
  const char* name;  ///< canonical name: "float32", "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2"
  const char* short_name;  ///< short name used in case names and labels: "f32", "f16", "bf16",
                           ///< "e4m3", "e5m2"
  std::size_t bytes;       ///< bytes per element
  int mantissa_bits;  ///< significand precision p in bits, implicit bit included (unit roundoff
                      ///< 2^-p)
  double max_finite;  ///< largest finite value
  double min_normal;  ///< smallest positive normal value
  uint32_t
      poison_bits;  ///< NaN pattern placed where no kernel may read (inputs' padding, unused slots)
  uint32_t output_poison_bits;  ///< NaN pattern outputs start with (differs from poison_bits)
  Hdf5Storage hdf5;             ///< how goldens store it
  bool query_dtype;             ///< may be the dtype of a query / output / contiguous K,V tensor
  bool fp8;                     ///< an 8-bit float that a KV cache may hold with float32 scales
};

/// Every dtype, in enum order (a vector: the project is C++17, no std::span).
const std::vector<DTypeInfo>& all_dtypes();
/// The row of `dtype`; throws std::invalid_argument for a value outside the enum.
const DTypeInfo& dtype_info(DType dtype);

/// Bytes per element.
std::size_t dtype_size(DType dtype);
/// Elements per 16-byte vector (the x of the x-split key layout: 16 / element size).
int64_t dtype_x(DType dtype);
/// The canonical name (dtype_info(dtype).name).
const char* dtype_name(DType dtype);
/// Parses a dtype name: canonical or short names, also "fp32", "fp16", "half", "e4m3fn",
/// "float8_e4m3fn", "float8_e5m2"; throws std::invalid_argument naming the text otherwise.
DType parse_dtype(std::string_view text);

/// Reads element `index` of a raw storage buffer, converting exactly to double (fp8 codes
/// decode exactly; e4m3's NaN codes and e5m2's NaN / infinity codes give NaN / +-inf).
double load_element(DType dtype, const std::byte* base, int64_t index);
/// Writes `value` as element `index` of a raw storage buffer, rounding to nearest even. For
/// fp8 the rule is quantize_fp8 below (saturating); for the 16/32-bit dtypes overflow gives
/// infinity as IEEE rounding does.
void store_element(DType dtype, std::byte* base, int64_t index, double value);

/// The fp8 code of `value` (fp8 dtypes only): round to nearest even on the dtype's grid,
/// values beyond the largest finite value saturate to +-max_finite (also +-inf), NaN gives the
/// dtype's canonical NaN (0x7f for both). docs/dtypes.md says why.
uint8_t quantize_fp8(DType dtype, double value);
/// The exact value of an fp8 code (NaN or +-inf for the special codes of e5m2, NaN for e4m3's
/// 0x7f / 0xff).
double dequantize_fp8(DType dtype, uint8_t code);

}  // namespace pagecheck
