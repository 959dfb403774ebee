/// The HDF5 layer: exact round trips, the float16 type, refusal of convertible types, and
/// byte-identical rewrites.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "golden_test_util.h"

namespace pagecheck::verify::golden {
namespace {

using testing::file_bytes;
using testing::TempDir;

GoldenDataset random_dataset(const std::string& path, ElementType type, std::vector<int64_t> dims,
                             uint64_t seed) {
  GoldenDataset d;
  d.path = path;
  d.type = type;
  d.dims = std::move(dims);
  d.bytes.resize(static_cast<std::size_t>(d.num_elements()) * element_size(type));
  std::mt19937_64 rng(seed);
  for (auto& b : d.bytes) b = static_cast<std::byte>(rng() & 0xFF);  // includes NaN payloads
  d.attrs["dtype"] = std::string(element_type_name(type));
  return d;
}

GoldenFile sample_file() {
  GoldenFile f;
  f.attrs["an_int"] = int64_t{-42};
  f.attrs["a_uint"] = uint64_t{0xFEDCBA9876543210ull};
  f.attrs["a_float"] = 0.1f;
  f.attrs["a_double"] = -1.0 / 3.0;
  f.attrs["a_string"] = std::string("hello golden");
  f.attrs["a_vector"] = std::vector<int64_t>{3, -1, 4, 1 << 30};
  uint64_t seed = 1;
  for (ElementType t : all_element_types()) {
    f.datasets.push_back(
        random_dataset(std::string("inputs/") + element_type_name(t), t, {3, 5, 7}, seed++));
    // A second, larger one that is chunked and compressed.
    f.datasets.push_back(
        random_dataset(std::string("expected/") + element_type_name(t), t, {64, 33}, seed++));
  }
  return f;
}

TEST(GoldenH5, RoundTripIsExactForEveryTypeAndAttribute) {
  TempDir dir;
  const GoldenFile written = sample_file();
  write_golden_file(written, dir.file("a.h5"));
  const GoldenFile read = read_golden_file(dir.file("a.h5"));
  EXPECT_EQ(read.attrs, written.attrs);
  ASSERT_EQ(read.datasets.size(), written.datasets.size());
  for (const GoldenDataset& w : written.datasets) {
    const GoldenDataset* r = read.find(w.path);
    ASSERT_NE(r, nullptr) << w.path;
    EXPECT_EQ(r->type, w.type) << w.path;
    EXPECT_EQ(r->dims, w.dims) << w.path;
    EXPECT_TRUE(r->bytes == w.bytes) << w.path << ": bytes changed on the way";
    EXPECT_EQ(r->attrs, w.attrs) << w.path;
  }
}

TEST(GoldenH5, EveryDtypeIsStoredAsTheDtypeTableSays) {
  TempDir dir;
  write_golden_file(sample_file(), dir.file("a.h5"));
  const hid_t file = H5Fopen(dir.file("a.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const DTypeInfo& row : all_dtypes()) {
    SCOPED_TRACE(row.name);
    const hid_t dset = H5Dopen2(file, (std::string("inputs/") + row.name).c_str(), H5P_DEFAULT);
    ASSERT_GE(dset, 0);
    const hid_t type = H5Dget_type(dset);
    EXPECT_EQ(H5Tget_size(type), row.bytes);
    EXPECT_NE(H5Tget_order(type), H5T_ORDER_BE);
    if (row.hdf5 == Hdf5Storage::kBits) {
      EXPECT_EQ(H5Tget_class(type), H5T_INTEGER);
      EXPECT_EQ(H5Tget_sign(type), H5T_SGN_NONE);
    } else {
      EXPECT_EQ(H5Tget_class(type), H5T_FLOAT);
      // HDF5's own conversion of the stored 1.0 to double must give 1.0: proves the bit fields
      // are the IEEE ones (binary16 included), not just the size.
      const uint32_t one_f32 = 0x3F800000u;
      const uint16_t one_f16 = 0x3C00;
      double converted = 0;
      std::memcpy(&converted, row.bytes == 4 ? static_cast<const void*>(&one_f32) : &one_f16,
                  row.bytes);
      ASSERT_GE(H5Tconvert(type, H5T_NATIVE_DOUBLE, 1, &converted, nullptr, H5P_DEFAULT), 0);
      EXPECT_EQ(converted, 1.0);
    }
    H5Tclose(type);
    H5Dclose(dset);
  }
  H5Fclose(file);
}

/// Writes one dataset with an HDF5 type the goldens do not use, then expects the reader to
/// refuse it by name instead of converting it.
void expect_type_refused(hid_t file_type, const char* what) {
  TempDir dir;
  const std::string path = dir.file("odd.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[1] = {4};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t dset =
      H5Dcreate2(file, "odd", file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const double values[4] = {1, 2, 3, 4};
  ASSERT_GE(H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0) << what;
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
  try {
    (void)read_golden_file(path);
    ADD_FAILURE() << what << " was accepted";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.file, path);
    EXPECT_EQ(e.dataset, "odd") << e.what();
    EXPECT_NE(std::string(e.what()).find("unsupported element type"), std::string::npos)
        << e.what();
  }
}

TEST(GoldenH5, RefusesTypesThatWouldNeedConversion) {
  expect_type_refused(H5T_IEEE_F32BE, "big-endian float32");
  expect_type_refused(H5T_STD_I16LE, "int16");
  expect_type_refused(H5T_STD_U32LE, "uint32");
  expect_type_refused(H5T_STD_I64BE, "big-endian int64");
}

TEST(GoldenH5, RefusesBitsWithoutOrWithAWrongDtypeTag) {
  for (ElementType type : {ElementType::kBFloat16, ElementType::kFloat8E4M3}) {
    for (const char* tag : {"", "float32", "int32"}) {
      SCOPED_TRACE(std::string(element_type_name(type)) + " tagged '" + tag + "'");
      TempDir dir;
      GoldenFile f;
      f.datasets.push_back(random_dataset("inputs/x", type, {8}, 7));
      if (*tag == '\0') {
        f.datasets.back().attrs.erase("dtype");
      } else {
        f.datasets.back().attrs["dtype"] = std::string(tag);
      }
      write_golden_file(f, dir.file("a.h5"));
      try {
        (void)read_golden_file(dir.file("a.h5"));
        ADD_FAILURE() << "accepted";
      } catch (const GoldenError& e) {
        EXPECT_EQ(e.dataset, "inputs/x");
        EXPECT_NE(std::string(e.what()).find("unsigned integers must carry a dtype attribute"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(GoldenH5, SameContentGivesSameBytesOnlyWithoutTimestamps) {
  TempDir dir;
  const GoldenFile file = build_golden(find_case("pa_gqa_f16_h128_b16"));
  WriteOptions timed;
  timed.track_times = true;
  write_golden_file(file, dir.file("timed1.h5"), timed);
  write_golden_file(file, dir.file("plain1.h5"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // timestamps have 1 s steps
  write_golden_file(file, dir.file("timed2.h5"), timed);
  write_golden_file(file, dir.file("plain2.h5"));
  // The control: with HDF5's default timestamps the bytes change, so the check below can fail.
  EXPECT_NE(file_bytes(dir.file("timed1.h5")), file_bytes(dir.file("timed2.h5")));
  EXPECT_EQ(file_bytes(dir.file("plain1.h5")), file_bytes(dir.file("plain2.h5")));
  // And building the case again from its definition gives the same file as well.
  write_golden_file(build_golden(find_case("pa_gqa_f16_h128_b16")), dir.file("plain3.h5"));
  EXPECT_EQ(file_bytes(dir.file("plain1.h5")), file_bytes(dir.file("plain3.h5")));
}

TEST(GoldenH5, CompressionPaysOnNaNFilledData) {
  TempDir dir;
  GoldenFile f;
  GoldenDataset d = random_dataset("inputs/cache", ElementType::kFloat16, {256, 128}, 3);
  for (std::size_t i = 0; i < d.bytes.size(); i += 2) {  // 7/8 NaN, like unused cache slots
    if ((i / 2) % 8 != 0) d.bytes[i] = std::byte{0x00}, d.bytes[i + 1] = std::byte{0x7E};
  }
  f.datasets.push_back(d);
  write_golden_file(f, dir.file("a.h5"));
  EXPECT_LT(testing::fs::file_size(dir.file("a.h5")), d.bytes.size() / 2);
  EXPECT_TRUE(read_golden_file(dir.file("a.h5")).datasets.at(0).bytes == d.bytes);
}

}  // namespace
}  // namespace pagecheck::verify::golden
