/// regen (byte-identical, refuses silent changes), check (catches output and input drift) and
/// diff.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "golden_test_util.h"

namespace pagecheck::verify::golden {
namespace {

using namespace testing;  // NOLINT: the helpers of golden_test_util.h

constexpr const char* kCase = "pa_alibi_f16_h64_b16";

TEST(GoldenRegen, RegeneratingGivesByteIdenticalFiles) {
  TempDir again;
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a later second than pristine
  std::ostringstream log;
  ASSERT_EQ(regen_goldens(RegenOptions{again.str(), {}, false}, log), 0) << log.str();
  const auto first = snapshot(pristine_goldens());
  const auto second = snapshot(again.str());
  ASSERT_EQ(first.size(), case_catalogue().size() + 1);  // + MANIFEST.json
  for (const auto& [name, bytes] : first) {
    ASSERT_TRUE(second.count(name)) << name;
    EXPECT_TRUE(second.at(name) == bytes) << name << " differs between two regenerations";
  }
  // Regenerating over an unchanged set leaves every file alone.
  std::ostringstream log2;
  ASSERT_EQ(regen_goldens(RegenOptions{again.str(), {}, false}, log2), 0) << log2.str();
  EXPECT_EQ(log2.str().find("created"), std::string::npos) << log2.str();
  EXPECT_EQ(log2.str().find("CHANGED"), std::string::npos) << log2.str();
  EXPECT_NE(log2.str().find("unchanged MANIFEST.json"), std::string::npos) << log2.str();
  EXPECT_EQ(snapshot(again.str()), second);
}

TEST(GoldenRegen, RegeneratesTheCommittedGoldensByteForByte) {
  const std::string committed = PAGECHECK_TEST_GOLDEN_DIR;
  if (!fs::exists(committed + "/" + kManifestName)) GTEST_SKIP() << "no goldens in " << committed;
  const auto fresh = snapshot(pristine_goldens());
  const auto recorded = snapshot(committed);
  EXPECT_EQ(fresh.size(), recorded.size());
  for (const auto& [name, sha] : fresh) {
    ASSERT_TRUE(recorded.count(name)) << name << " is not committed";
    EXPECT_EQ(recorded.at(name), sha) << name << " regenerates to other bytes than committed";
  }
}

TEST(GoldenRegen, RefusesAChangedGoldenWithoutForce) {
  TempDir dir;
  copy_goldens(pristine_goldens(), dir.str());
  const std::string path = dir.file(std::string(kCase) + ".h5");
  rewrite(path, [](GoldenFile& f) {  // one output element moved by 0.25, checksum refreshed
    GoldenDataset& d = dataset(f, "expected/out_f64");
    double v = 0;
    std::memcpy(&v, d.bytes.data() + 8 * 5, 8);
    v += 0.25;
    std::memcpy(d.bytes.data() + 8 * 5, &v, 8);
    refresh_sha(d);
  });
  const auto tampered = snapshot(dir.str());
  std::ostringstream log;
  EXPECT_EQ(regen_goldens(RegenOptions{dir.str(), {kCase}, false}, log), 1);
  EXPECT_NE(log.str().find("CHANGED   " + std::string(kCase)), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("expected/out_f64: 1 of"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("max abs diff 0.25"), std::string::npos) << log.str();
  EXPECT_EQ(snapshot(dir.str()), tampered) << "refused regen still wrote (or left a temp file)";

  std::ostringstream forced;
  EXPECT_EQ(regen_goldens(RegenOptions{dir.str(), {kCase}, true}, forced), 0) << forced.str();
  EXPECT_EQ(snapshot(dir.str()), snapshot(pristine_goldens()));
}

TEST(GoldenRegen, UnknownCaseIsBadUsageAndWritesNothing) {
  TempDir dir;
  EXPECT_THROW(
      {
        std::ostringstream log;
        regen_goldens(RegenOptions{dir.str(), {"no_such_case"}, false}, log);
      },
      std::invalid_argument);
  EXPECT_TRUE(snapshot(dir.str()).empty());
  std::ostringstream log;
  EXPECT_THROW(regen_goldens(RegenOptions{dir.file("missing"), {}, false}, log),
               std::invalid_argument);
}

TEST(GoldenCheck, FreshGoldensPass) {
  std::ostringstream out;
  EXPECT_EQ(check_goldens(pristine_goldens(), out), 0) << out.str();
}

/// Edits one dataset of a copy of the goldens (checksums refreshed, so the file is well formed)
/// and returns check's status and output.
std::pair<int, std::string> check_after_edit(const char* name, const char* dataset_path,
                                             const std::function<void(GoldenDataset&)>& edit) {
  TempDir dir;
  copy_goldens(pristine_goldens(), dir.str());
  const std::string path = dir.file(std::string(name) + ".h5");
  rewrite(path, [&](GoldenFile& f) {
    GoldenDataset& d = dataset(f, dataset_path);
    edit(d);
    refresh_sha(d);
  });
  record_in_manifest(dir.str(), name);  // the manifest agrees; the content checks must object
  std::ostringstream out;
  const int status = check_goldens(dir.str(), out);
  return {status, out.str()};
}

TEST(GoldenCheck, CatchesOneUlpInAStorageOutput) {
  const auto [status, out] = check_after_edit(kCase, "expected/out", [](GoldenDataset& d) {
    d.bytes[6] ^= std::byte{0x01};  // lowest mantissa bit of element 3
  });
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("expected/out (bit for bit): 1 of"), std::string::npos) << out;
}

TEST(GoldenCheck, Float64ToleranceIsOneE12OfTheLargestMagnitude) {
  const auto nudge = [](double relative) {
    return [relative](GoldenDataset& d) {
      double v = 0;
      std::memcpy(&v, d.bytes.data(), 8);
      v *= 1 + relative;
      std::memcpy(d.bytes.data(), &v, 8);
    };
  };
  const auto [big_status, big_out] = check_after_edit(kCase, "expected/out_f64", nudge(1e-9));
  EXPECT_EQ(big_status, 1) << big_out;
  EXPECT_NE(big_out.find("expected/out_f64: 1 of"), std::string::npos) << big_out;
  const auto [small_status, small_out] = check_after_edit(kCase, "expected/lse", nudge(1e-14));
  EXPECT_EQ(small_status, 0) << small_out;
}

TEST(GoldenCheck, CatchesInputsThatNoLongerMatchTheDefinition) {
  const auto [status, out] = check_after_edit("gather_f16_h128_b16", "inputs/key_cache",
                                              [](GoldenDataset& d) { d.bytes[0] ^= std::byte{4}; });
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("differs from its definition"), std::string::npos) << out;
  EXPECT_NE(out.find("inputs/key_cache"), std::string::npos) << out;
}

TEST(GoldenCheck, CatchesACopyOutputOffByOneElement) {
  const auto [status, out] =
      check_after_edit("reshape_f32_h64_b8", "expected/value_cache",
                       [](GoldenDataset& d) { d.bytes[400] ^= std::byte{1}; });
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("expected/value_cache (bit for bit): 1 of"), std::string::npos) << out;
}

TEST(GoldenDiff, ReportsEqualAndDifferentFiles) {
  const std::string a = pristine_goldens() + "/pa_h80_f16_b16.h5";
  const std::string b = pristine_goldens() + "/pa_h80_bf16_b8.h5";
  std::ostringstream same;
  EXPECT_EQ(diff_goldens(a, a, same), 0) << same.str();
  std::ostringstream different;
  EXPECT_EQ(diff_goldens(a, b, different), 1);
  EXPECT_NE(different.str().find("attribute dtype: float16 vs bfloat16"), std::string::npos)
      << different.str();
  EXPECT_NE(different.str().find("expected/out: dtype float16 vs bfloat16"), std::string::npos)
      << different.str();
}

TEST(GoldenShow, PrintsParametersAndDatasets) {
  std::ostringstream out;
  show_golden(pristine_goldens() + "/pa_padded_f16_h128_b16.h5", out);
  for (const char* needle :
       {"pa_padded_f16_h128_b16", "cache_key_stride_slot", "cache_kind", "batch_block_table_stride",
        "feature_causal", "seed", "reference_version", "inputs/key_cache", "logical [", "NaN",
        "--reproduce-spec", "paged_attention float16"}) {
    EXPECT_NE(out.str().find(needle), std::string::npos) << needle << "\n" << out.str();
  }
}

}  // namespace
}  // namespace pagecheck::verify::golden
