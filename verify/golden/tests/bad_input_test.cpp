/// Every kind of bad golden input gives an error naming the file and the dataset (exit 2 from
/// check) and writes nothing.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "golden_scratch_test.h"

namespace pagecheck::verify::golden {
namespace {

using namespace testing;  // NOLINT: the helpers of golden_test_util.h

constexpr const char* kAttention = "pa_gqa_f16_h128_b16";
constexpr const char* kCopy = "reshape_bf16_h256_b16";

class GoldenBadInput : public GoldenScratchTest {
 protected:
  std::string source() const override { return partial_goldens({kAttention, kCopy}); }

  std::string path(const char* name) const { return file(name); }

  /// Loading `name` throws a GoldenError naming its file, `dataset` and `words`; `check` then
  /// exits 2 naming both and leaves every byte of the directory as it was.
  void expect_bad(const char* name, const std::string& dataset, const std::string& words) {
    const auto before = snapshot(dir_.str());
    try {
      (void)load_golden(path(name));
      ADD_FAILURE() << "no error for " << name;
    } catch (const GoldenError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.file, path(name)) << what;
      EXPECT_EQ(e.dataset, dataset) << what;
      EXPECT_NE(what.find(path(name)), std::string::npos) << what;
      EXPECT_NE(what.find(dataset), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
    std::ostringstream out;
    EXPECT_EQ(check_goldens(dir_.str(), out), 2) << out.str();
    EXPECT_NE(out.str().find("BAD  " + path(name)), std::string::npos) << out.str();
    EXPECT_NE(out.str().find(dataset), std::string::npos) << out.str();
    EXPECT_EQ(snapshot(dir_.str()), before) << "check wrote into the golden directory";
  }

  /// File offset and size of the first stored block of a dataset (contiguous or chunk 0).
  std::pair<haddr_t, hsize_t> storage_of(const char* name, const char* dataset) const {
    const hid_t file = H5Fopen(path(name).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t dset = H5Dopen2(file, dataset, H5P_DEFAULT);
    haddr_t addr = H5Dget_offset(dset);
    hsize_t size = H5Dget_storage_size(dset);
    if (addr == HADDR_UNDEF) {  // chunked: the first chunk
      const hid_t space = H5Dget_space(dset);
      hsize_t offset[8] = {0};
      unsigned mask = 0;
      H5Dget_chunk_info(dset, space, 0, offset, &mask, &addr, &size);
      H5Sclose(space);
    }
    H5Dclose(dset);
    H5Fclose(file);
    return {addr, size};
  }

  void corrupt(const char* name, const char* dataset) {
    const auto [addr, size] = storage_of(name, dataset);
    ASSERT_NE(addr, HADDR_UNDEF);
    std::string bytes = file_bytes(path(name));
    for (hsize_t k = size / 2; k < size / 2 + 8; ++k)
      bytes[addr + k] = static_cast<char>(~bytes[addr + k]);
    put_file_bytes(path(name), bytes);
  }
};

TEST_F(GoldenBadInput, MissingFile) {
  testing::fs::remove(path(kAttention));
  expect_bad(kAttention, "", "file not found");
}

TEST_F(GoldenBadInput, TruncatedFile) {
  const std::string bytes = file_bytes(path(kAttention));
  put_file_bytes(path(kAttention), bytes.substr(0, bytes.size() / 2));
  expect_bad(kAttention, "", "truncated");
}

TEST_F(GoldenBadInput, CorruptRawBytes) {
  corrupt(kAttention, "inputs/context_lens");  // contiguous: the checksum catches it
  expect_bad(kAttention, "inputs/context_lens", "SHA-256 mismatch");
}

TEST_F(GoldenBadInput, CorruptCompressedChunk) {
  corrupt(kAttention, "inputs/key_cache");  // deflated: inflate or the checksum catches it
  try {
    (void)load_golden(path(kAttention));
    FAIL() << "corrupt chunk accepted";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.dataset, "inputs/key_cache") << e.what();
  }
}

TEST_F(GoldenBadInput, NotAnHdf5File) {
  put_file_bytes(path(kCopy), "this is not HDF5\n");
  expect_bad(kCopy, "", "not an HDF5 file");
}

TEST_F(GoldenBadInput, NewerSchemaVersion) {
  rewrite(path(kCopy), [](GoldenFile& f) { f.attrs["schema_version"] = int64_t{99}; });
  expect_bad(kCopy, "attribute schema_version", "schema version 99 is newer than this build");
}

TEST_F(GoldenBadInput, SchemaOneFileIsExplainedWithTheRegenCommand) {
  // What a golden of the first schema looks like to this reader: version 1, none of the new
  // attributes (the message must not be about a missing attribute).
  rewrite(path(kAttention), [](GoldenFile& f) {
    f.attrs.clear();
    f.attrs["schema_version"] = int64_t{1};
    f.attrs["cache_x"] = int64_t{8};
  });
  expect_bad(kAttention, "attribute schema_version",
             "schema version 1 predates the problem-model redesign");
  expect_bad(kAttention, "attribute schema_version", "this build reads schema version 2");
  expect_bad(kAttention, "attribute schema_version", "`pagecheck golden regen --force`");
}

TEST_F(GoldenBadInput, SchemaOneManifestIsExplainedWithTheRegenCommand) {
  nlohmann::json manifest = read_manifest(dir_.str());
  manifest["schema_version"] = 1;
  write_manifest(dir_.str(), manifest);
  const auto before = snapshot(dir_.str());
  std::ostringstream out;
  EXPECT_EQ(check_goldens(dir_.str(), out), 2) << out.str();
  for (const char* words : {"MANIFEST.json: schema_version: schema version 1 predates the "
                            "problem-model redesign",
                            "pagecheck golden regen --force"}) {
    EXPECT_NE(out.str().find(words), std::string::npos) << words << "\n" << out.str();
  }
  EXPECT_EQ(snapshot(dir_.str()), before);
}

TEST_F(GoldenBadInput, MissingDataset) {
  rewrite(path(kAttention), [](GoldenFile& f) {
    f.datasets.erase(
        std::remove_if(f.datasets.begin(), f.datasets.end(),
                       [](const GoldenDataset& d) { return d.path == "inputs/block_table"; }),
        f.datasets.end());
  });
  expect_bad(kAttention, "inputs/block_table", "missing dataset");
}

TEST_F(GoldenBadInput, MissingAttribute) {
  rewrite(path(kAttention), [](GoldenFile& f) { f.attrs.erase("cache_key_stride_slot"); });
  expect_bad(kAttention, "attribute cache_key_stride_slot", "missing");
}

TEST_F(GoldenBadInput, WrongShape) {
  rewrite(path(kAttention), [](GoldenFile& f) {
    GoldenDataset& d = dataset(f, "inputs/context_lens");
    d.dims = {1, d.dims.at(0)};  // same bytes, another shape
  });
  expect_bad(kAttention, "inputs/context_lens", "wrong shape");
}

TEST_F(GoldenBadInput, WrongDtype) {
  rewrite(path(kAttention), [](GoldenFile& f) {
    GoldenDataset& d = dataset(f, "expected/lse");  // float64 -> float32, checksum refreshed
    std::vector<std::byte> narrowed(d.bytes.size() / 2);
    for (int64_t i = 0; i < d.num_elements(); ++i) {
      const auto v = static_cast<float>(element_as_double(d.type, d.bytes.data(), i));
      std::memcpy(narrowed.data() + i * 4, &v, 4);
    }
    d.type = ElementType::kFloat32;
    d.bytes = narrowed;
    d.attrs["dtype"] = std::string("float32");
    refresh_sha(d);
  });
  expect_bad(kAttention, "expected/lse", "wrong dtype");
}

TEST_F(GoldenBadInput, ChecksumMismatch) {
  rewrite(path(kCopy), [](GoldenFile& f) {
    GoldenDataset& d = dataset(f, "inputs/key");
    d.bytes[10] ^= std::byte{0x01};  // one bit of one element; sha256 attribute kept
  });
  expect_bad(kCopy, "inputs/key", "SHA-256 mismatch");
}

TEST_F(GoldenBadInput, UnexpectedDataset) {
  rewrite(path(kCopy), [](GoldenFile& f) {
    GoldenDataset extra = f.datasets.front();
    extra.path = "inputs/extra";
    f.datasets.push_back(extra);
  });
  expect_bad(kCopy, "inputs/extra", "unexpected dataset");
}

TEST_F(GoldenBadInput, MissingManifest) {
  testing::fs::remove(dir_.file(kManifestName));
  const auto before = snapshot(dir_.str());
  std::ostringstream out;
  EXPECT_EQ(check_goldens(dir_.str(), out), 2);
  EXPECT_NE(out.str().find(dir_.file(kManifestName)), std::string::npos) << out.str();
  EXPECT_EQ(snapshot(dir_.str()), before);
}

TEST_F(GoldenBadInput, ShowAndDiffReportTheFile) {
  testing::fs::remove(path(kAttention));
  std::ostringstream out;
  EXPECT_THROW(show_golden(path(kAttention), out), GoldenError);
  EXPECT_THROW(diff_goldens(path(kAttention), path(kCopy), out), GoldenError);
}

}  // namespace
}  // namespace pagecheck::verify::golden
