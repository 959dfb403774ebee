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

std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return 2;
    case ElementType::kFloat32:
    case ElementType::kInt32:
      return 4;
    case ElementType::kFloat64:
    case ElementType::kInt64:
      return 8;
  }
  return 0;
}

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::kFloat16:
      return "float16";
    case ElementType::kBFloat16:
      return "bfloat16";
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
  }
  return "unknown";
}

ElementType parse_element_type(const std::string& text) {
  for (ElementType type : {ElementType::kFloat16, ElementType::kBFloat16, ElementType::kFloat32,
                           ElementType::kFloat64, ElementType::kInt32, ElementType::kInt64}) {
    if (text == element_type_name(type)) return type;
  }
  throw std::invalid_argument("unknown element type '" + text + "'");
}

double element_as_double(ElementType type, const std::byte* base, int64_t index) {
  switch (type) {
    case ElementType::kFloat16:
      return load_element(DType::kFloat16, base, index);
    case ElementType::kBFloat16:
      return load_element(DType::kBFloat16, base, index);
    case ElementType::kFloat32:
      return load_element(DType::kFloat32, base, index);
    case ElementType::kFloat64: {
      double value = 0;
      std::memcpy(&value, base + index * 8, 8);
      return value;
    }
    case ElementType::kInt32: {
      int32_t value = 0;
      std::memcpy(&value, base + index * 4, 4);
      return value;
    }
    case ElementType::kInt64: {
      int64_t value = 0;
      std::memcpy(&value, base + index * 8, 8);
      return static_cast<double>(value);
    }
  }
  return 0;
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
