#pragma once
/// In-memory model of one golden HDF5 file (root attributes + raw datasets) and its exact,
/// conversion-free HDF5 reader and writer. The schema (which attributes and datasets a case
/// holds) lives in golden_schema.h; this layer only moves bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace pagecheck::verify::golden {

/// Bad golden input (missing, truncated or corrupt file, wrong schema, shape, dtype or
/// checksum). The message names the file and, where one is involved, the dataset.
struct GoldenError : std::invalid_argument {
  GoldenError(const std::string& file, const std::string& dataset, const std::string& what);
  std::string file;     ///< path of the offending file
  std::string dataset;  ///< dataset or attribute path inside it ("" for the file itself)
};

/// Element type of a dataset as stored in the file. bfloat16 is stored as little-endian
/// uint16 with a `dtype` attribute "bfloat16"; every other type is its own HDF5 type.
enum class ElementType {
  kFloat16,   ///< IEEE binary16, little-endian (h5py: '<f2')
  kBFloat16,  ///< bfloat16 bits as uint16, little-endian (h5py: '<u2' + dtype attribute)
  kFloat32,   ///< IEEE binary32, little-endian
  kFloat64,   ///< IEEE binary64, little-endian
  kInt32,     ///< two's complement int32, little-endian
  kInt64,     ///< two's complement int64, little-endian
};

/// Bytes per element.
std::size_t element_size(ElementType type);
/// "float16", "bfloat16", "float32", "float64", "int32", "int64".
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
