/// pagecheck.golden: a golden fixture (docs/fixtures.md), validated by the harness's own
/// loader, handed to Python as numpy arrays over the loaded bytes plus its attributes.
#include <utility>
#include <variant>

#include <pybind11/stl.h>

#include "array_out.h"
#include "bindings.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::python {
namespace {

namespace golden = verify::golden;

/// The numpy dtype h5py reads an element type as (bfloat16: its uint16 bits; fp8: uint8 codes).
py::dtype numpy_dtype(golden::ElementType type) {
  switch (type) {
    case golden::ElementType::kFloat16:
      return py::dtype("<f2");
    case golden::ElementType::kBFloat16:
      return py::dtype("<u2");
    case golden::ElementType::kFloat8E4M3:
    case golden::ElementType::kFloat8E5M2:
      return py::dtype("u1");
    case golden::ElementType::kFloat32:
      return py::dtype("<f4");
    case golden::ElementType::kFloat64:
      return py::dtype("<f8");
    case golden::ElementType::kInt32:
      return py::dtype("<i4");
    case golden::ElementType::kInt64:
      return py::dtype("<i8");
  }
  throw std::invalid_argument("unknown element type");
}

/// An attribute as Python sees it: int, float, str, or an int64 numpy array for vectors.
py::object attr_value(const golden::AttrValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return py::array_t<int64_t>(static_cast<py::ssize_t>(v.size()), v.data());
        } else {
          return py::cast(v);
        }
      },
      value);
}

py::dict attrs_dict(const std::map<std::string, golden::AttrValue>& attrs) {
  py::dict d;
  for (const auto& [name, value] : attrs) d[py::str(name)] = attr_value(value);
  return d;
}

/// load_golden(path) as a dict: path, name, description, family, dtype, seed,
/// reference_version, attrs (root attributes) and datasets (path -> {data, attrs}; data as
/// stored, with the file's dims, owning the loaded bytes).
py::dict load(const std::string& path) {
  golden::LoadedGolden g;
  {
    py::gil_scoped_release released;
    g = golden::load_golden(path);
  }
  py::dict result;
  result["path"] = g.path;
  result["name"] = g.name;
  result["description"] = g.description;
  result["dtype"] = dtype_name(g.dtype);
  result["seed"] = g.seed;
  result["reference_version"] = g.reference_version;
  result["attrs"] = attrs_dict(g.raw.attrs);
  py::dict datasets;
  for (golden::GoldenDataset& d : g.raw.datasets) {
    py::dict entry;
    entry["attrs"] = attrs_dict(d.attrs);
    entry["data"] =
        bytes_array(std::move(d.bytes), numpy_dtype(d.type), d.dims, packed_strides(d.dims));
    datasets[py::str(d.path)] = entry;
  }
  result["datasets"] = datasets;
  return result;
}

}  // namespace

void bind_golden(py::module_& m) {
  m.doc() = "Golden fixtures (fixtures/golden/*.h5) as numpy arrays; see docs/python.md.";
  m.def("load", &load, pybind11::arg("path"),
        "The golden at path, validated (schema, shapes, SHA-256), as a dict of attributes and "
        "datasets.");
}

}  // namespace pagecheck::python
