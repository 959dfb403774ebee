#pragma once
/// The building blocks of the golden schema, shared by the writer and the reader of every
/// concept (problem_attrs.h): what a dataset must be, the strict reader of root attributes and
/// datasets, token-tensor strides, and which schema versions this build reads.
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pagecheck/reference/layout.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {

/// Root or dataset attributes.
using AttrMap = std::map<std::string, AttrValue>;

/// What one dataset must be.
struct DatasetSpec {
  std::string path;                          ///< "inputs/query", ...
  ElementType type = ElementType::kFloat32;  ///< exact element type
  std::vector<int64_t> dims;                 ///< dataspace dims
  std::vector<int64_t> logical_shape;        ///< tensors: logical shape (empty for arrays)
  std::vector<int64_t> strides;              ///< tensors: strides in elements (empty for arrays)
  AttrMap extra_attrs;                       ///< further attributes the dataset must carry
};

/// A strided tensor of `dtype` with logical `shape` and `strides` (elements): stored with the
/// logical shape as its dims when the strides are that shape's row-major strides, otherwise as
/// one flat dimension of span elements (largest offset + 1).
DatasetSpec tensor_spec(const std::string& path, DType dtype, std::vector<int64_t> shape,
                        std::vector<int64_t> strides);
/// A token tensor [num_tokens, num_heads, head_size] in `layout`.
DatasetSpec token_tensor_spec(const std::string& path, DType dtype, const ref::TokenLayout& layout);
/// A plain array (index arrays, scales, float64 outputs): dims only, no layout attributes.
DatasetSpec array_spec(const std::string& path, ElementType type, std::vector<int64_t> dims);

/// A dataset per `spec` holding `bytes`, with its dtype, sha256 and (tensors) logical_shape and
/// strides attributes.
GoldenDataset make_dataset(const DatasetSpec& spec, std::vector<std::byte> bytes);
/// Appends make_dataset(spec, bytes) to `file`.
void add_dataset(GoldenFile& file, const DatasetSpec& spec, std::vector<std::byte> bytes);
/// Checks that `dataset` matches `spec` (presence, element type, dims, dtype attribute, layout
/// attributes) and that its bytes hash to its sha256 attribute; throws GoldenError naming
/// `path` and the dataset otherwise.
void check_dataset(const DatasetSpec& spec, const GoldenDataset* dataset, const std::string& path);

/// The raw bytes of `values`.
template <typename T>
std::vector<std::byte> as_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// "" when this build reads files of schema `version` (kSchemaVersion); otherwise what the
/// version is (older: before the problem-model redesign; newer: from a later build) and the
/// command that regenerates the goldens. Used for golden files and MANIFEST.json alike.
std::string schema_version_problem(int64_t version);

/// Reads one golden strictly: root attributes by name and type, datasets against their spec,
/// remembering which datasets were read so that the rest can be refused. Every accessor
/// throws GoldenError naming the file and "attribute <name>" or the dataset.
class GoldenReader {
 public:
  /// Reads `file`, named `path` in errors (both must outlive the reader).
  GoldenReader(const GoldenFile& file, const std::string& path);

  const GoldenFile& file() const { return file_; }   ///< the file read
  const std::string& path() const { return path_; }  ///< its path, for messages

  /// True when the root attribute exists.
  bool has(const std::string& name) const { return file_.attrs.count(name) != 0; }
  int64_t integer(const std::string& name) const;            ///< int64 attribute
  uint64_t unsigned_integer(const std::string& name) const;  ///< uint64 attribute
  float real(const std::string& name) const;                 ///< float32 attribute
  std::string text(const std::string& name) const;           ///< string attribute
  /// An int64 attribute that must be 0 or 1.
  bool flag(const std::string& name) const;
  /// parse(text(name)); an exception it throws becomes a GoldenError naming the attribute.
  template <typename Parse>
  auto parsed(const std::string& name, Parse parse) const -> decltype(parse(std::string())) {
    const std::string value = text(name);
    try {
      return parse(value);
    } catch (const std::exception& e) {
      throw GoldenError(path_, "attribute " + name, e.what());
    }
  }

  /// The bytes of the dataset `spec` describes, after check_dataset; marks it read.
  const std::vector<std::byte>& bytes(const DatasetSpec& spec);
  /// The dataset's elements as T (an array of that element size).
  template <typename T>
  std::vector<T> values(const DatasetSpec& spec) {
    const std::vector<std::byte>& raw = bytes(spec);
    std::vector<T> out(raw.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
    return out;
  }
  /// Throws GoldenError naming the first dataset no reader asked for (`what` says which schema
  /// and family it is not part of).
  void refuse_unread(const std::string& what) const;

 private:
  const GoldenFile& file_;
  std::string path_;
  std::set<std::string> read_;
};

/// Root attributes `<prefix>_stride_token` and `<prefix>_stride_head` of a token tensor.
void write_token_strides(const std::string& prefix, const ref::TokenLayout& layout, AttrMap& attrs);
/// The [num_tokens, num_heads, head_size] layout with those strides, validated (GoldenError
/// naming the attributes otherwise).
ref::TokenLayout read_token_strides(const GoldenReader& reader, const std::string& prefix,
                                    int64_t num_tokens, int64_t num_heads, int64_t head_size);

}  // namespace pagecheck::verify::golden
