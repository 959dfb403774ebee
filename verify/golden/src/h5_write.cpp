/// Reproducible HDF5 writer: no object timestamps, fixed-length strings, exact types.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "h5_util.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::golden {
namespace {

using h5::Handle;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("HDF5 write " + path + ": " + what + ": " + h5::error_text());
}

/// An object-creation property list of `cls` with timestamps on or (for goldens) off.
Handle creation_plist(hid_t cls, bool track_times, const std::string& path) {
  Handle plist(H5Pcreate(cls), H5Pclose);
  if (!plist.ok() || H5Pset_obj_track_times(plist.get(), track_times ? 1 : 0) < 0) {
    fail(path, "property list");
  }
  return plist;
}

void write_attr(hid_t obj, const std::string& name, const AttrValue& value,
                const std::string& where) {
  Handle space;
  Handle type;
  const void* data = nullptr;
  std::string text;
  if (const auto* vec = std::get_if<std::vector<int64_t>>(&value)) {
    const hsize_t dims[1] = {static_cast<hsize_t>(vec->size())};
    space = Handle(H5Screate_simple(1, dims, nullptr), H5Sclose);
    type = h5::make_type(ElementType::kInt64);
    data = vec->data();
  } else {
    space = Handle(H5Screate(H5S_SCALAR), H5Sclose);
    if (const auto* i = std::get_if<int64_t>(&value)) {
      type = Handle(H5Tcopy(H5T_STD_I64LE), H5Tclose), data = i;
    } else if (const auto* u = std::get_if<uint64_t>(&value)) {
      type = Handle(H5Tcopy(H5T_STD_U64LE), H5Tclose), data = u;
    } else if (const auto* f = std::get_if<float>(&value)) {
      type = Handle(H5Tcopy(H5T_IEEE_F32LE), H5Tclose), data = f;
    } else if (const auto* d = std::get_if<double>(&value)) {
      type = Handle(H5Tcopy(H5T_IEEE_F64LE), H5Tclose), data = d;
    } else {
      text = std::get<std::string>(value);
      if (text.empty()) text.push_back('\0');  // HDF5 strings need at least one byte
      type = Handle(H5Tcopy(H5T_C_S1), H5Tclose);
      if (!type.ok() || H5Tset_size(type.get(), text.size()) < 0 ||
          H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0) {
        fail(where, "string type for attribute " + name);
      }
      data = text.data();
    }
  }
  if (!space.ok() || !type.ok()) fail(where, "attribute " + name);
  Handle attr(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  // The memory type is the file type: the bytes go to disk as they are (all little-endian).
  if (!attr.ok() || H5Awrite(attr.get(), type.get(), data) < 0) fail(where, "attribute " + name);
}

void write_attrs(hid_t obj, const std::map<std::string, AttrValue>& attrs,
                 const std::string& where) {
  for (const auto& [name, value] : attrs) write_attr(obj, name, value, where);
}

void write_dataset(hid_t file, const GoldenDataset& dataset, const WriteOptions& options,
                   const std::string& path) {
  const std::string where = path + ": " + dataset.path;
  const std::size_t expected_bytes =
      static_cast<std::size_t>(dataset.num_elements()) * element_size(dataset.type);
  if (dataset.bytes.size() != expected_bytes || dataset.dims.empty()) {
    throw std::invalid_argument(where + ": holds " + std::to_string(dataset.bytes.size()) +
                                " bytes for " + std::to_string(expected_bytes) + " expected");
  }
  std::vector<hsize_t> dims(dataset.dims.begin(), dataset.dims.end());
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle type = h5::make_type(dataset.type);
  Handle dcpl = creation_plist(H5P_DATASET_CREATE, options.track_times, where);
  if (!space.ok() || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0) fail(where, "dcpl");
  if (expected_bytes >= options.compress_min_bytes && expected_bytes > 0) {
    // Chunks of at most 1 MiB along the slowest dimension; shuffle groups the bytes of equal
    // significance, deflate compresses; both optional, so a chunk that does not shrink stays
    // raw.
    const std::size_t row_bytes = expected_bytes / static_cast<std::size_t>(dims[0]);
    std::vector<hsize_t> chunk = dims;
    chunk[0] = std::clamp<hsize_t>((1u << 20) / std::max<std::size_t>(row_bytes, 1), 1, dims[0]);
    const unsigned level = static_cast<unsigned>(options.deflate_level);
    if (H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) < 0 ||
        H5Pset_filter(dcpl.get(), H5Z_FILTER_SHUFFLE, H5Z_FLAG_OPTIONAL, 0, nullptr) < 0 ||
        H5Pset_filter(dcpl.get(), H5Z_FILTER_DEFLATE, H5Z_FLAG_OPTIONAL, 1, &level) < 0) {
      fail(where, "chunking/compression");
    }
  }
  Handle dset(H5Dcreate2(file, dataset.path.c_str(), type.get(), space.get(), H5P_DEFAULT,
                         dcpl.get(), H5P_DEFAULT),
              H5Dclose);
  if (!dset.ok()) fail(where, "create dataset");
  if (H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, dataset.bytes.data()) < 0) {
    fail(where, "write dataset");
  }
  write_attrs(dset.get(), dataset.attrs, where);
}

/// Writes `image` to `path` (created or truncated) and flushes it to the disk; on failure removes
/// what was written and throws std::runtime_error naming the path and the system error.
void write_image(const std::vector<unsigned char>& image, const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  int err = 0;
  while (done < image.size() && err == 0) {
    const ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n > 0) done += static_cast<std::size_t>(n);
    if (n < 0 && errno != EINTR) err = errno;
    if (n == 0) err = EIO;
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(path.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
}

/// A file-access property list for HDF5's in-memory (core) driver without a backing store:
/// HDF5 never touches the disk, so a full disk cannot leave it with a file it cannot close.
Handle memory_fapl(const std::string& path) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0) fail(path, "core driver");
  return fapl;
}

}  // namespace

void write_golden_file(const GoldenFile& file, const std::string& path,
                       const WriteOptions& options) {
  h5::silence_errors();
  // Built in memory, then written with plain system calls: HDF5's own writes of a file on a
  // full disk fail in H5Fclose, leave the file open inside the library and crash its shutdown at
  // exit. The bytes are the same as a file written by HDF5 directly.
  Handle fcpl = creation_plist(H5P_FILE_CREATE, options.track_times, path);  // root group
  Handle fapl = memory_fapl(path);
  Handle handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose);
  if (!handle.ok()) fail(path, "create file");
  Handle gcpl = creation_plist(H5P_GROUP_CREATE, options.track_times, path);
  std::vector<std::string> groups;
  for (const GoldenDataset& dataset : file.datasets) {
    const auto slash = dataset.path.find('/');
    if (slash == std::string::npos) continue;
    const std::string group = dataset.path.substr(0, slash);
    if (std::find(groups.begin(), groups.end(), group) != groups.end()) continue;
    Handle g(H5Gcreate2(handle.get(), group.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
             H5Gclose);
    if (!g.ok()) fail(path, "create group " + group);
    groups.push_back(group);
  }
  write_attrs(handle.get(), file.attrs, path);
  for (const GoldenDataset& dataset : file.datasets) {
    write_dataset(handle.get(), dataset, options, path);
  }
  if (H5Fflush(handle.get(), H5F_SCOPE_GLOBAL) < 0) fail(path, "flush file");
  const ssize_t size = H5Fget_file_image(handle.get(), nullptr, 0);
  if (size < 0) fail(path, "file image size");
  std::vector<unsigned char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(handle.get(), image.data(), image.size()) != size) {
    fail(path, "file image");
  }
  if (!handle.reset()) fail(path, "close file");
  write_image(image, path);
}

}  // namespace pagecheck::verify::golden
