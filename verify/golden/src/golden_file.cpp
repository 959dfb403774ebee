/// Element types, attribute rendering and the in-memory golden file model.
#include "pagecheck/verify/golden_file.h"

#include <cstring>
#include <sstream>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::verify::golden {

GoldenError::GoldenError(const std::string& file_path, const std::string& dataset_path,
                         const std::string& what)
    : std::invalid_argument(file_path + (dataset_path.empty() ? "" : ": " + dataset_path) + ": " +
                            what),
      file(file_path),
      dataset(dataset_path) {}

std::vector<ElementType> all_element_types() {
  std::vector<ElementType> types;
  for (const DTypeInfo& row : all_dtypes()) types.push_back(element_type_of(row.dtype));
  for (ElementType t : {ElementType::kFloat64, ElementType::kInt32, ElementType::kInt64}) {
    types.push_back(t);
  }
  return types;
}

ElementType element_type_of(DType dtype) {
  (void)dtype_info(dtype);  // throws for a value outside the enum
  return static_cast<ElementType>(static_cast<int32_t>(dtype));
}

std::optional<DType> dtype_of(ElementType type) {
  const auto value = static_cast<int32_t>(type);
  if (value < 0 || value >= static_cast<int32_t>(all_dtypes().size())) return std::nullopt;
  return static_cast<DType>(value);
}

bool stored_as_bits(ElementType type) {
  const std::optional<DType> dtype = dtype_of(type);
  return dtype && dtype_info(*dtype).hdf5 == Hdf5Storage::kBits;
}

std::size_t element_size(ElementType type) {
  if (const std::optional<DType> dtype = dtype_of(type)) return dtype_size(*dtype);
  return type == ElementType::kInt32 ? 4 : 8;
}

const char* element_type_name(ElementType type) {
  if (const std::optional<DType> dtype = dtype_of(type)) return dtype_name(*dtype);
  switch (type) {
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
    default:
      return "float64";
  }
}

ElementType parse_element_type(const std::string& text) {
  for (ElementType type : all_element_types()) {
    if (text == element_type_name(type)) return type;
  }
  throw std::invalid_argument("unknown element type '" + text + "'");
}

double element_as_double(ElementType type, const std::byte* base, int64_t index) {
  if (const std::optional<DType> dtype = dtype_of(type)) {
    return load_element(*dtype, base, index);
  }
  if (type == ElementType::kInt32) {
    int32_t value = 0;
    std::memcpy(&value, base + index * 4, 4);
    return value;
  }
  if (type == ElementType::kInt64) {
    int64_t value = 0;
    std::memcpy(&value, base + index * 8, 8);
    return static_cast<double>(value);
  }
  double value = 0;
  std::memcpy(&value, base + index * 8, 8);
  return value;
}

std::string attr_to_string(const AttrValue& value) {
  std::ostringstream out;
  out.precision(17);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* i = std::get_if<int64_t>(&value)) out << *i;
  if (const auto* u = std::get_if<uint64_t>(&value)) out << *u;
  if (const auto* f = std::get_if<float>(&value)) out.precision(9), out << *f;
  if (const auto* d = std::get_if<double>(&value)) out << *d;
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    out << '[';
    for (std::size_t k = 0; k < v->size(); ++k) out << (k ? ", " : "") << (*v)[k];
    out << ']';
  }
  return out.str();
}

int64_t GoldenDataset::num_elements() const {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

const GoldenDataset* GoldenFile::find(const std::string& path) const {
  for (const GoldenDataset& dataset : datasets) {
    if (dataset.path == path) return &dataset;
  }
  return nullptr;
}

}  // namespace pagecheck::verify::golden
