/// The golden schema's building blocks: dataset specs and checks, the strict reader, token
/// strides, schema versions.
#include "golden_schema.h"

#include <stdexcept>

#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  return attr_to_string(AttrValue(dims));
}

/// Row-major strides of `shape`.
std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

/// Elements a buffer of that shape and those strides must hold (largest offset + 1).
int64_t span_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] <= 0) return 0;
    last += (shape[k] - 1) * strides[k];
  }
  return last + 1;
}

template <typename T>
const T& attr_as(const GoldenFile& file, const std::string& name, const std::string& path,
                 const char* type_name) {
  const auto it = file.attrs.find(name);
  if (it == file.attrs.end()) throw GoldenError(path, "attribute " + name, "missing");
  const T* value = std::get_if<T>(&it->second);
  if (value == nullptr) {
    throw GoldenError(path, "attribute " + name,
                      std::string("wrong type (expected ") + type_name + ")");
  }
  return *value;
}

}  // namespace

DatasetSpec tensor_spec(const std::string& path, DType dtype, std::vector<int64_t> shape,
                        std::vector<int64_t> strides) {
  const bool dense = strides == row_major(shape);
  DatasetSpec spec;
  spec.path = path;
  spec.type = element_type_of(dtype);
  spec.dims = dense ? shape : std::vector<int64_t>{span_of(shape, strides)};
  spec.logical_shape = std::move(shape);
  spec.strides = std::move(strides);
  return spec;
}

DatasetSpec token_tensor_spec(const std::string& path, DType dtype, const ref::TokenLayout& t) {
  return tensor_spec(path, dtype, {t.num_tokens, t.num_heads, t.head_size},
                     {t.stride_token, t.stride_head, 1});
}

DatasetSpec array_spec(const std::string& path, ElementType type, std::vector<int64_t> dims) {
  DatasetSpec spec;
  spec.path = path;
  spec.type = type;
  spec.dims = std::move(dims);
  return spec;
}

GoldenDataset make_dataset(const DatasetSpec& spec, std::vector<std::byte> bytes) {
  GoldenDataset d;
  d.path = spec.path;
  d.type = spec.type;
  d.dims = spec.dims;
  d.bytes = std::move(bytes);
  d.attrs = spec.extra_attrs;
  d.attrs["dtype"] = std::string(element_type_name(spec.type));
  d.attrs["sha256"] = sha256_hex(d.bytes.data(), d.bytes.size());
  if (!spec.logical_shape.empty()) {
    d.attrs["logical_shape"] = spec.logical_shape;
    d.attrs["strides"] = spec.strides;
  }
  return d;
}

void add_dataset(GoldenFile& file, const DatasetSpec& spec, std::vector<std::byte> bytes) {
  file.datasets.push_back(make_dataset(spec, std::move(bytes)));
}

void check_dataset(const DatasetSpec& spec, const GoldenDataset* d, const std::string& path) {
  if (d == nullptr) throw GoldenError(path, spec.path, "missing dataset");
  if (d->type != spec.type) {
    throw GoldenError(path, spec.path,
                      std::string("wrong dtype: ") + element_type_name(d->type) +
                          " (the schema needs " + element_type_name(spec.type) + ")");
  }
  if (d->dims != spec.dims) {
    throw GoldenError(
        path, spec.path,
        "wrong shape " + dims_text(d->dims) + " (the schema needs " + dims_text(spec.dims) + ")");
  }
  const auto attr = [&](const std::string& name) -> const AttrValue* {
    const auto it = d->attrs.find(name);
    return it == d->attrs.end() ? nullptr : &it->second;
  };
  const AttrValue* dtype = attr("dtype");
  if (dtype == nullptr || attr_to_string(*dtype) != element_type_name(spec.type)) {
    throw GoldenError(
        path, spec.path,
        std::string("dtype attribute must be \"") + element_type_name(spec.type) + "\"");
  }
  if (!spec.logical_shape.empty()) {
    const AttrValue* shape = attr("logical_shape");
    const AttrValue* strides = attr("strides");
    if (shape == nullptr || strides == nullptr || *shape != AttrValue(spec.logical_shape) ||
        *strides != AttrValue(spec.strides)) {
      throw GoldenError(path, spec.path,
                        "logical_shape/strides attributes disagree with the root layout "
                        "attributes (expected " +
                            dims_text(spec.logical_shape) + " / " + dims_text(spec.strides) + ")");
    }
  }
  for (const auto& [name, want] : spec.extra_attrs) {
    const AttrValue* have = attr(name);
    if (have == nullptr || *have != want) {
      throw GoldenError(path, spec.path,
                        "attribute " + name + " must be " + attr_to_string(want) +
                            " (from the root layout attributes)");
    }
  }
  const AttrValue* sha = attr("sha256");
  if (sha == nullptr || !std::holds_alternative<std::string>(*sha)) {
    throw GoldenError(path, spec.path, "missing sha256 attribute");
  }
  const std::string actual = sha256_hex(d->bytes.data(), d->bytes.size());
  if (actual != std::get<std::string>(*sha)) {
    throw GoldenError(path, spec.path,
                      "SHA-256 mismatch: attribute says " + std::get<std::string>(*sha) +
                          ", data hashes to " + actual + " (corrupt or edited data)");
  }
}

std::string schema_version_problem(int64_t version) {
  if (version == kSchemaVersion) return "";
  const std::string regen =
      "; regenerate the goldens with `pagecheck golden regen --force` (docs/fixtures.md, "
      "\"Migration\")";
  if (version >= 1 && version < kSchemaVersion) {
    return "schema version " + std::to_string(version) +
           " predates the problem-model redesign (issue 12: cache descriptor, ragged batch and "
           "attention features as attributes, the case spec stored in the file); this build "
           "reads schema version " +
           std::to_string(kSchemaVersion) + regen;
  }
  if (version > kSchemaVersion) {
    return "schema version " + std::to_string(version) + " is newer than this build (it reads " +
           std::to_string(kSchemaVersion) + "): use a newer pagecheck, or" + regen.substr(1);
  }
  return "unsupported schema version " + std::to_string(version) + " (this build reads " +
         std::to_string(kSchemaVersion) + ")";
}

GoldenReader::GoldenReader(const GoldenFile& file, const std::string& path)
    : file_(file), path_(path) {}

int64_t GoldenReader::integer(const std::string& name) const {
  return attr_as<int64_t>(file_, name, path_, "int64");
}
uint64_t GoldenReader::unsigned_integer(const std::string& name) const {
  return attr_as<uint64_t>(file_, name, path_, "uint64");
}
float GoldenReader::real(const std::string& name) const {
  return attr_as<float>(file_, name, path_, "float32");
}
std::string GoldenReader::text(const std::string& name) const {
  return attr_as<std::string>(file_, name, path_, "string");
}

bool GoldenReader::flag(const std::string& name) const {
  const int64_t value = integer(name);
  if (value != 0 && value != 1) {
    throw GoldenError(path_, "attribute " + name, "must be 0 or 1, is " + std::to_string(value));
  }
  return value == 1;
}

const std::vector<std::byte>& GoldenReader::bytes(const DatasetSpec& spec) {
  const GoldenDataset* d = file_.find(spec.path);
  check_dataset(spec, d, path_);
  read_.insert(spec.path);
  return d->bytes;
}

void GoldenReader::refuse_unread(const std::string& what) const {
  for (const GoldenDataset& d : file_.datasets) {
    if (read_.count(d.path) == 0) {
      throw GoldenError(path_, d.path, "unexpected dataset (not part of " + what + ")");
    }
  }
}

void write_token_strides(const std::string& prefix, const ref::TokenLayout& layout,
                         AttrMap& attrs) {
  attrs[prefix + "_stride_token"] = layout.stride_token;
  attrs[prefix + "_stride_head"] = layout.stride_head;
}

ref::TokenLayout read_token_strides(const GoldenReader& r, const std::string& prefix,
                                    int64_t num_tokens, int64_t num_heads, int64_t head_size) {
  ref::TokenLayout t{num_tokens, num_heads, head_size, r.integer(prefix + "_stride_token"),
                     r.integer(prefix + "_stride_head")};
  try {
    t.validate(prefix.c_str());
  } catch (const std::invalid_argument& e) {
    throw GoldenError(r.path(), "attributes " + prefix + "_stride_*", e.what());
  }
  return t;
}

}  // namespace pagecheck::verify::golden
