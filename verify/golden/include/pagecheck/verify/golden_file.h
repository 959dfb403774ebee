#pragma once
/// In-memory model of one golden HDF5 file (root attributes + raw datasets) and its exact,
/// conversion-free HDF5 reader and writer. The schema (which attributes and datasets a case
/// holds) lives in golden_schema.h; this layer only moves bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::verify::golden {

/// Bad golden input (missing, truncated or corrupt file, wrong schema, shape, dtype or
/// checksum). The message names the file and, where one is involved, the dataset.
struct GoldenError : std::invalid_argument {
  GoldenError(const std::string& file, const std::string& dataset, const std::string& what);
  std::string file;     ///< path of the offending file
  std::string dataset;  ///< dataset or attribute path inside it ("" for the file itself)
};

/// Element type of a dataset: one of the storage dtypes (same numeric values as DType) or one
/// of the index / float64 types. How a dtype's elements are kept follows the dtype table
/// (DTypeInfo::hdf5): Hdf5Storage::kIeeeFloat as the IEEE float type of the element's width,
/// Hdf5Storage::kBits as little-endian unsigned integers of the element's width with a dataset
/// attribute `dtype` naming the dtype (HDF5 1.10 has no bfloat16 or fp8 type).
enum class ElementType : int32_t {
  kFloat32 = 0,     ///< DType::kFloat32
  kFloat16 = 1,     ///< DType::kFloat16
  kBFloat16 = 2,    ///< DType::kBFloat16
  kFloat8E4M3 = 3,  ///< DType::kFloat8E4M3
  kFloat8E5M2 = 4,  ///< DType::kFloat8E5M2
  kFloat64 = 16,    ///< IEEE binary64, little-endian
  kInt32 = 17,      ///< two's complement int32, little-endian
  kInt64 = 18,      ///< two's complement int64, little-endian
};

/// Every element type: the dtypes in table order, then float64, int32, int64.
std::vector<ElementType> all_element_types();
/// The element type of tensors of `dtype`.
ElementType element_type_of(DType dtype);
/// The dtype an element type stores, or nullopt for float64 / int32 / int64.
std::optional<DType> dtype_of(ElementType type);
/// True when the type is kept as unsigned integers plus a `dtype` attribute (see above).
bool stored_as_bits(ElementType type);
/// Bytes per element.
std::size_t element_size(ElementType type);
/// The dtype's canonical name ("float16", "fp8_e4m3", ...), or "float64", "int32", "int64".
const char* element_type_name(ElementType type);
/// Inverse of element_type_name; throws std::invalid_argument naming the text.
ElementType parse_element_type(const std::string& text);
/// Reads element `index` of raw little-endian storage as double (exact for every type here).
double element_as_double(ElementType type, const std::byte* base, int64_t index);

/// An attribute value: int64 scalar (H5T_STD_I64LE), uint64 scalar (H5T_STD_U64LE), float32
/// scalar (H5T_IEEE_F32LE), float64 scalar (H5T_IEEE_F64LE), fixed-length string, or int64
/// vector (1-D H5T_STD_I64LE).
using AttrValue = std::variant<int64_t, uint64_t, float, double, std::string, std::vector<int64_t>>;

/// Renders an attribute value for messages and `pagecheck golden show`.
std::string attr_to_string(const AttrValue& value);

/// One dataset: raw little-endian bytes plus the attributes the schema puts on every tensor.
struct GoldenDataset {
  std::string path;                          ///< "inputs/query", "expected/out", ...
  ElementType type = ElementType::kFloat32;  ///< element type in the file
  std::vector<int64_t> dims;                 ///< HDF5 dataspace dimensions (row-major)
  std::vector<std::byte> bytes;              ///< raw contents, product(dims) * element_size bytes
  std::map<std::string, AttrValue> attrs;    ///< dataset attributes (dtype, sha256, ...)

  /// Elements (product of dims).
  int64_t num_elements() const;
};

/// One golden file: root attributes and datasets (in write order; groups are implied by the
/// dataset paths, one level deep).
struct GoldenFile {
  std::map<std::string, AttrValue> attrs;  ///< root attributes
  std::vector<GoldenDataset> datasets;     ///< every dataset, in write order

  /// The dataset at `path`, or nullptr.
  const GoldenDataset* find(const std::string& path) const;
};

/// Options of the writer.
struct WriteOptions {
  /// Datasets of at least this many bytes are chunked with shuffle + deflate; the filters are
  /// optional, so a chunk that would not shrink is stored as is.
  std::size_t compress_min_bytes = 4096;
  int deflate_level = 6;  ///< zlib level
  /// Record object modification times (HDF5's default). Off for goldens: with it on, two writes
  /// of the same content a second apart differ.
  bool track_times = false;
};

/// Writes `file` to `path` (created or truncated) with object timestamps off and fixed-length
/// string attributes, so the same content always gives the same bytes. Throws
/// std::runtime_error naming the path and dataset on an HDF5 failure.
void write_golden_file(const GoldenFile& file, const std::string& path,
                       const WriteOptions& options = {});

/// Reads every attribute and dataset of `path`. Each dataset's HDF5 type must be exactly one
/// of the ElementType types (class, size, byte order, bit fields); the data is read with that
/// type as memory type, so HDF5 never converts it. Throws GoldenError naming the file and
/// dataset on a missing, unreadable, truncated or corrupt file or an unexpected type.
GoldenFile read_golden_file(const std::string& path);

}  // namespace pagecheck::verify::golden
