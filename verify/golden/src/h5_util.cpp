/// HDF5 helpers: error stack as text, exact element types.
#include "h5_util.h"

#include <optional>
#include <stdexcept>
#include <vector>

namespace pagecheck::verify::golden::h5 {
namespace {

herr_t collect_error(unsigned /*n*/, const H5E_error2_t* err, void* client) {
  auto* lines = static_cast<std::vector<std::string>*>(client);
  if (err != nullptr && err->desc != nullptr && err->desc[0] != '\0') lines->push_back(err->desc);
  return 0;
}

/// Builds IEEE binary16 from binary32 as h5py does (sign bit 15, exponent bits 10..14 with bias
/// 15, mantissa bits 0..9, size 2 bytes).
Handle make_half() {
  Handle type(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
  if (!type.ok() || H5Tset_fields(type.get(), 15, 10, 5, 0, 10) < 0 ||
      H5Tset_size(type.get(), 2) < 0 || H5Tset_ebias(type.get(), 15) < 0) {
    throw std::runtime_error("HDF5: cannot build the float16 type: " + error_text());
  }
  return type;
}

}  // namespace

void silence_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

std::string error_text() {
  std::vector<std::string> lines;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &lines);
  if (lines.empty()) return "unknown HDF5 error";
  // Downward walk: the API call first, the root cause last.
  std::string text = lines.back();
  if (lines.size() >= 2 && lines[lines.size() - 2] != text) {
    text = lines[lines.size() - 2] + ": " + text;
  }
  return text;
}

Handle make_type(ElementType type) {
  hid_t base = H5T_IEEE_F64LE;
  if (const std::optional<DType> dtype = dtype_of(type)) {
    const std::size_t bytes = dtype_size(*dtype);
    if (stored_as_bits(type)) {
      base = bytes == 1 ? H5T_STD_U8LE : bytes == 2 ? H5T_STD_U16LE : H5T_STD_U32LE;
    } else if (bytes == 2) {
      return make_half();
    } else {
      base = bytes == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    }
  } else if (type == ElementType::kInt32) {
    base = H5T_STD_I32LE;
  } else if (type == ElementType::kInt64) {
    base = H5T_STD_I64LE;
  }
  Handle copy(H5Tcopy(base), H5Tclose);
  if (!copy.ok()) throw std::runtime_error("HDF5: H5Tcopy failed: " + error_text());
  return copy;
}

bool classify_type(hid_t type_id, const std::string& tag, ElementType* type) {
  for (ElementType candidate : all_element_types()) {
    Handle reference = make_type(candidate);
    if (H5Tequal(type_id, reference.get()) <= 0) continue;
    // Unsigned integers hold the bits of whichever dtype the tag names.
    if (stored_as_bits(candidate) && tag != element_type_name(candidate)) continue;
    *type = candidate;
    return true;
  }
  return false;
}

std::string describe_type(hid_t type_id) {
  const H5T_class_t cls = H5Tget_class(type_id);
  std::string name;
  switch (cls) {
    case H5T_INTEGER:
      name = H5Tget_sign(type_id) == H5T_SGN_NONE ? "unsigned INTEGER" : "signed INTEGER";
      break;
    case H5T_FLOAT:
      name = "FLOAT";
      break;
    case H5T_STRING:
      name = "STRING";
      break;
    case H5T_COMPOUND:
      name = "COMPOUND";
      break;
    case H5T_ENUM:
      name = "ENUM";
      break;
    case H5T_ARRAY:
      name = "ARRAY";
      break;
    default:
      name = "class " + std::to_string(static_cast<int>(cls));
  }
  std::string text = name + ", size " + std::to_string(H5Tget_size(type_id));
  const H5T_order_t order = H5Tget_order(type_id);
  if (order == H5T_ORDER_LE) text += ", little-endian";
  if (order == H5T_ORDER_BE) text += ", big-endian";
  if (cls == H5T_FLOAT) {
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    H5Tget_fields(type_id, &spos, &epos, &esize, &mpos, &msize);
    text += ", exponent " + std::to_string(esize) + " bits, mantissa " + std::to_string(msize) +
            " bits, bias " + std::to_string(H5Tget_ebias(type_id));
  }
  return text;
}

}  // namespace pagecheck::verify::golden::h5
