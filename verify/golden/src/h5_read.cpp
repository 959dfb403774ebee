/// Strict HDF5 reader: only the exact element types of golden files, never converted.
#include <filesystem>
#include <string>
#include <vector>

#include "h5_util.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {
namespace {

using h5::Handle;

/// Largest dataset the reader accepts (goldens are small; a corrupt header can claim more).
constexpr uint64_t kMaxDatasetBytes = uint64_t{1} << 30;

struct Reader {
  std::string path;  ///< file path, for messages

  [[noreturn]] void fail(const std::string& object, const std::string& what) const {
    throw GoldenError(path, object, what);
  }

  AttrValue read_attr(hid_t attr, const std::string& where) const {
    Handle type(H5Aget_type(attr), H5Tclose);
    Handle space(H5Aget_space(attr), H5Sclose);
    if (!type.ok() || !space.ok()) fail(where, "unreadable attribute: " + h5::error_text());
    const int rank = H5Sget_simple_extent_ndims(space.get());
    const H5T_class_t cls = H5Tget_class(type.get());
    const auto read = [&](hid_t exact, void* out) {
      if (H5Tequal(type.get(), exact) <= 0) {
        fail(where, "unsupported attribute type (" + h5::describe_type(type.get()) + ")");
      }
      if (H5Aread(attr, type.get(), out) < 0) fail(where, "cannot read: " + h5::error_text());
    };
    if (rank == 1) {
      hsize_t dims[1] = {0};
      H5Sget_simple_extent_dims(space.get(), dims, nullptr);
      if (dims[0] > 4096) fail(where, "attribute vector too long");
      std::vector<int64_t> values(dims[0]);
      read(H5T_STD_I64LE, values.data());
      return values;
    }
    if (rank != 0) fail(where, "attribute of rank " + std::to_string(rank) + " not supported");
    if (cls == H5T_STRING) {
      if (H5Tis_variable_str(type.get()) > 0) fail(where, "variable-length string not supported");
      std::string text(H5Tget_size(type.get()), '\0');
      if (H5Aread(attr, type.get(), text.data()) < 0)
        fail(where, "cannot read: " + h5::error_text());
      text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
      return text;
    }
    if (cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE) {
      uint64_t value = 0;
      read(H5T_STD_U64LE, &value);
      return value;
    }
    if (cls == H5T_INTEGER) {
      int64_t value = 0;
      read(H5T_STD_I64LE, &value);
      return value;
    }
    if (cls == H5T_FLOAT && H5Tget_size(type.get()) == 4) {
      float value = 0;
      read(H5T_IEEE_F32LE, &value);
      return value;
    }
    double value = 0;
    read(H5T_IEEE_F64LE, &value);
    return value;
  }

  std::map<std::string, AttrValue> read_attrs(hid_t obj, const std::string& where) const {
    H5O_info_t info;
    if (H5Oget_info2(obj, &info, H5O_INFO_NUM_ATTRS) < 0) {
      fail(where, "cannot list attributes: " + h5::error_text());
    }
    std::map<std::string, AttrValue> attrs;
    for (hsize_t k = 0; k < info.num_attrs; ++k) {
      Handle attr(H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, k, H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose);
      if (!attr.ok()) fail(where, "cannot open attribute: " + h5::error_text());
      const ssize_t len = H5Aget_name(attr.get(), 0, nullptr);
      std::string name(static_cast<std::size_t>(std::max<ssize_t>(len, 0)), '\0');
      H5Aget_name(attr.get(), name.size() + 1, name.data());
      const std::string label = (where.empty() ? "" : where + " ") + "attribute " + name;
      attrs[name] = read_attr(attr.get(), label);
    }
    return attrs;
  }

  GoldenDataset read_dataset(hid_t file, const std::string& name) const {
    GoldenDataset dataset;
    dataset.path = name;
    Handle dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dset.ok()) fail(name, "cannot open dataset: " + h5::error_text());
    dataset.attrs = read_attrs(dset.get(), name);
    Handle type(H5Dget_type(dset.get()), H5Tclose);
    const auto tag_it = dataset.attrs.find("dtype");
    const std::string tag = tag_it == dataset.attrs.end() ? "" : attr_to_string(tag_it->second);
    if (!type.ok() || !h5::classify_type(type.get(), tag, &dataset.type)) {
      const std::string described = type.ok() ? h5::describe_type(type.get()) : h5::error_text();
      const bool bits = type.ok() && H5Tget_class(type.get()) == H5T_INTEGER &&
                        H5Tget_sign(type.get()) == H5T_SGN_NONE;
      fail(name, "unsupported element type (" + described + ")" +
                     (bits ? ": unsigned integers must carry a dtype attribute naming a dtype "
                             "stored as bits of their width (the attribute says \"" +
                                 tag + "\")"
                           : "; goldens hold little-endian IEEE floats, int32, int64, or the "
                             "bits of bfloat16 / fp8 as unsigned integers tagged with a dtype "
                             "attribute"));
    }
    Handle space(H5Dget_space(dset.get()), H5Sclose);
    const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (rank < 1 || rank > 8) fail(name, "unsupported dataspace of rank " + std::to_string(rank));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    uint64_t bytes = element_size(dataset.type);
    for (hsize_t d : dims) {
      dataset.dims.push_back(static_cast<int64_t>(d));
      bytes *= d;
      if (bytes > kMaxDatasetBytes) fail(name, "dataset larger than 1 GiB");
    }
    dataset.bytes.resize(bytes);
    // Memory type = the file's own type: HDF5 copies the bytes without any conversion.
    if (bytes > 0 &&
        H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, dataset.bytes.data()) < 0) {
      fail(name, "cannot read data (corrupt or truncated file?): " + h5::error_text());
    }
    return dataset;
  }

  /// Names of the links of `group` (by name order), split into groups and datasets.
  void list(hid_t loc, const std::string& prefix, std::vector<std::string>* datasets,
            std::vector<std::string>* groups) const {
    const char* at = prefix.empty() ? "." : prefix.c_str();
    H5G_info_t info;
    if (H5Gget_info_by_name(loc, at, &info, H5P_DEFAULT) < 0) {
      fail(prefix, "cannot list group: " + h5::error_text());
    }
    for (hsize_t k = 0; k < info.nlinks; ++k) {
      const ssize_t len =
          H5Lget_name_by_idx(loc, at, H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
      if (len < 0) fail(prefix, "cannot read link name: " + h5::error_text());
      std::string name(static_cast<std::size_t>(len), '\0');
      H5Lget_name_by_idx(loc, at, H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size() + 1,
                         H5P_DEFAULT);
      const std::string full = prefix.empty() ? name : prefix + "/" + name;
      H5O_info_t object;
      if (H5Oget_info_by_name2(loc, full.c_str(), &object, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        fail(full, "cannot open object: " + h5::error_text());
      }
      if (object.type == H5O_TYPE_GROUP) {
        groups->push_back(full);
      } else if (object.type == H5O_TYPE_DATASET) {
        datasets->push_back(full);
      } else {
        fail(full, "unexpected object type (neither group nor dataset)");
      }
    }
  }
};

}  // namespace

GoldenFile read_golden_file(const std::string& path) {
  h5::silence_errors();
  const Reader reader{path};
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) reader.fail("", "file not found");
  if (!std::filesystem::is_regular_file(path, ec)) reader.fail("", "not a regular file");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    reader.fail("", "not an HDF5 file (no valid superblock; truncated or corrupt?)");
  }
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) reader.fail("", "cannot open HDF5 file: " + h5::error_text());
  GoldenFile golden;
  golden.attrs = reader.read_attrs(file.get(), "");
  std::vector<std::string> datasets;
  std::vector<std::string> groups;
  reader.list(file.get(), "", &datasets, &groups);
  for (const std::string& group : groups) {
    std::vector<std::string> nested;
    reader.list(file.get(), group, &datasets, &nested);
    if (!nested.empty()) reader.fail(nested.front(), "nested groups are not part of the schema");
  }
  for (const std::string& name : datasets) {
    golden.datasets.push_back(reader.read_dataset(file.get(), name));
  }
  return golden;
}

}  // namespace pagecheck::verify::golden
