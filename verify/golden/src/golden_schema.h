#pragma once
/// The golden schema, shared by the writer (build_golden) and the reader (parse_golden): which
/// root attributes describe a case's shape, and which datasets (path, element type, dims) a case
/// of each family holds.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/layout.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {

/// Every size and stride of a case, as recorded in the root attributes.
struct CaseShape {
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  DType dtype = DType::kFloat16;                 ///< storage dtype
  ref::PagedCacheLayout cache;                   ///< key/value cache layout
  ref::TokenLayout tokens;                       ///< attention: query; copies: contiguous key
  ref::TokenLayout values;         ///< copies: contiguous value (unused for attention)
  int64_t num_seqs = 0;            ///< attention: sequences
  int64_t num_heads = 0;           ///< attention: query heads
  int64_t max_blocks_per_seq = 0;  ///< attention: block-table columns
  bool alibi = false;              ///< attention: has inputs/alibi_slopes
};

/// What one dataset must be.
struct DatasetSpec {
  std::string path;                          ///< "inputs/query", ...
  ElementType type = ElementType::kFloat32;  ///< exact element type
  std::vector<int64_t> dims;                 ///< dataspace dims
  std::vector<int64_t> logical_shape;        ///< tensors: logical shape (empty for index arrays)
  std::vector<int64_t> strides;  ///< tensors: strides in elements (empty for index arrays)
};

/// The ElementType that stores `dtype`.
ElementType storage_type(DType dtype);

/// Adds the shape attributes (cache_*, query_* / key_* / value_*, num_seqs, ...) of `shape`.
void put_shape_attrs(const CaseShape& shape, std::map<std::string, AttrValue>* attrs);
/// Reads them back; throws GoldenError naming `path` and the attribute when one is missing,
/// has the wrong type, or the layouts they describe are inconsistent.
CaseShape parse_shape_attrs(const GoldenFile& file, const std::string& path);

/// The datasets of a case of this shape, in write order.
std::vector<DatasetSpec> dataset_specs(const CaseShape& shape);

/// A dataset per `spec` holding `bytes`, with its dtype, sha256 and (tensors) logical_shape and
/// strides attributes.
GoldenDataset make_dataset(const DatasetSpec& spec, std::vector<std::byte> bytes);
/// Checks that `dataset` matches `spec` (presence, element type, dims, dtype attribute, layout
/// attributes) and that its bytes hash to its sha256 attribute; throws GoldenError naming
/// `path` and the dataset otherwise.
void check_dataset(const DatasetSpec& spec, const GoldenDataset* dataset, const std::string& path);

/// Root attribute accessors: throw GoldenError naming `path` and "attribute <name>" when the
/// attribute is missing or of another type.
int64_t attr_int(const GoldenFile& file, const std::string& name, const std::string& path);
uint64_t attr_uint(const GoldenFile& file, const std::string& name, const std::string& path);
float attr_float(const GoldenFile& file, const std::string& name, const std::string& path);
std::string attr_string(const GoldenFile& file, const std::string& name, const std::string& path);

}  // namespace pagecheck::verify::golden
