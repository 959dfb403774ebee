#pragma once
/// Private helpers of the HDF5 layer: owning identifiers, the error stack as text, and the
/// exact HDF5 type of each ElementType.
#include <hdf5.h>

#include <string>
#include <utility>

#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden::h5 {

/// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  ~Handle() { reset(); }
  /// The identifier (negative when the creating call failed).
  hid_t get() const { return id_; }
  /// True when the identifier is valid.
  bool ok() const { return id_ >= 0; }
  /// Closes the identifier now; returns false when closing failed.
  bool reset() {
    bool closed = true;
    if (id_ >= 0 && closer_ != nullptr) closed = closer_(id_) >= 0;
    id_ = H5I_INVALID_HID;
    return closed;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Turns off HDF5's automatic printing of error stacks (errors become exceptions instead).
void silence_errors();
/// The innermost messages of the current HDF5 error stack, e.g. "truncated file: eof = 1024,
/// sblock->base_addr = 0, stored_eof = 4096"; "unknown HDF5 error" when the stack is empty.
std::string error_text();

/// A new copy of the HDF5 type that stores `type` (golden_file.h: IEEE floats of the element's
/// width, binary16 built from H5T_IEEE_F32LE the way h5py builds '<f2'; bit-stored dtypes as
/// little-endian unsigned integers of their width; int32 / int64 / float64 as themselves).
Handle make_type(ElementType type);
/// The ElementType whose HDF5 type equals `type_id` exactly (class, size, order, fields, sign);
/// an unsigned integer type is the bit-stored dtype of that width that `tag` (the dataset's
/// `dtype` attribute) names. False when none matches.
bool classify_type(hid_t type_id, const std::string& tag, ElementType* type);
/// "class FLOAT, size 4, order BE" and similar, for messages about rejected types.
std::string describe_type(hid_t type_id);

}  // namespace pagecheck::verify::golden::h5
