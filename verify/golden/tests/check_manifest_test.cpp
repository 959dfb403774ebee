/// check against MANIFEST.json: every metadata field is compared with the file (a failed check
/// naming file and field), entries must stay inside the directory (bad input), and the verdicts
/// come out as JSON.
#include <gtest/gtest.h>

#include <sstream>

#include "golden_scratch_test.h"

namespace pagecheck::verify::golden {
namespace {

using namespace testing;  // NOLINT: the helpers of golden_test_util.h

constexpr const char* kAttention = "pa_alibi_f16_h64_b16";
constexpr const char* kCopy = "reshape_f16_h128_b16";

/// A scratch copy of the complete golden set whose MANIFEST.json the tests edit.
class GoldenManifestCheck : public GoldenScratchTest {
 protected:
  std::string source() const override { return pristine_goldens(); }
  void SetUp() override {
    GoldenScratchTest::SetUp();
    original_ = read_manifest(dir_.str());
  }

  /// Writes the original manifest with `edit` applied to the entry of `name`, runs check.
  std::pair<int, std::string> check_with(const std::string& name,
                                         const std::function<void(nlohmann::json&)>& edit,
                                         CheckReport* report = nullptr) {
    nlohmann::json manifest = original_;
    bool found = false;
    for (auto& entry : manifest.at("cases")) {
      if (entry.at("name") != name) continue;
      edit(entry);
      found = true;
    }
    EXPECT_TRUE(found) << name;
    write_manifest(dir_.str(), manifest);
    std::ostringstream out;
    const int status = check_goldens(dir_.str(), out, report);
    return {status, out.str()};
  }

  nlohmann::json original_;
};

TEST_F(GoldenManifestCheck, UneditedManifestPasses) {
  const auto [status, out] = check_with(kAttention, [](nlohmann::json&) {});
  EXPECT_EQ(status, 0) << out;
}

TEST_F(GoldenManifestCheck, EachMetadataFieldIsCheckedAgainstTheFile) {
  struct Plant {
    const char* name;   // case
    const char* field;  // as reported
    std::function<void(nlohmann::json&)> edit;
  };
  const std::vector<Plant> plants = {
      {kAttention, "family", [](nlohmann::json& e) { e["family"] = "gather_cached_kv"; }},
      {kAttention, "dtype", [](nlohmann::json& e) { e["dtype"] = "bfloat16"; }},
      {kAttention, "description", [](nlohmann::json& e) { e["description"] = "other"; }},
      {kAttention, "seed", [](nlohmann::json& e) { e["seed"] = e["seed"].get<uint64_t>() + 1; }},
      {kAttention, "file_bytes", [](nlohmann::json& e) { e["file_bytes"] = 12345; }},
      {kAttention, "parameters.head_size",
       [](nlohmann::json& e) { e["parameters"]["head_size"] = 128; }},
      {kAttention, "parameters.context_lens",
       [](nlohmann::json& e) {
         e["parameters"]["context_lens"] = {50, 24};
       }},
      {kAttention, "parameters.alibi", [](nlohmann::json& e) { e["parameters"]["alibi"] = false; }},
      {kAttention, "parameters.regime",
       [](nlohmann::json& e) { e["parameters"]["regime"] = "flat"; }},
      {kAttention, "parameters.cache", [](nlohmann::json& e) { e["parameters"].erase("cache"); }},
      {kAttention, "parameters.extra", [](nlohmann::json& e) { e["parameters"]["extra"] = 1; }},
      {kCopy, "parameters.slot_mapping",
       [](nlohmann::json& e) { e["parameters"]["slot_mapping"] = {0}; }},
      {kCopy, "parameters.num_blocks",
       [](nlohmann::json& e) { e["parameters"]["num_blocks"] = 99; }},
      {kCopy, "parameters", [](nlohmann::json& e) { e.erase("parameters"); }},
  };
  for (const Plant& plant : plants) {
    CheckReport report;
    const auto [status, out] = check_with(plant.name, plant.edit, &report);
    EXPECT_EQ(status, 1) << plant.field << "\n" << out;
    const std::string line = std::string("MANIFEST.json: ") + plant.field + ": ";
    EXPECT_NE(out.find(line), std::string::npos) << plant.field << "\n" << out;
    EXPECT_NE(out.find(file(plant.name)), std::string::npos) << plant.field << "\n" << out;
    EXPECT_NE(out.find(std::string("FAIL ") + plant.name + ":"), std::string::npos) << out;
  }
}

TEST_F(GoldenManifestCheck, EveryMismatchOfAnEntryIsReported) {
  const auto [status, out] = check_with(kAttention, [](nlohmann::json& e) {
    e["seed"] = 1;
    e["dtype"] = "float32";
    e["parameters"]["num_heads"] = 3;
  });
  EXPECT_EQ(status, 1) << out;
  for (const char* field : {"seed", "dtype", "parameters.num_heads"}) {
    EXPECT_NE(out.find(std::string("MANIFEST.json: ") + field + ": "), std::string::npos)
        << field << "\n"
        << out;
  }
}

TEST_F(GoldenManifestCheck, TotalBytesMustAddUp) {
  nlohmann::json manifest = original_;
  manifest["total_bytes"] = manifest["total_bytes"].get<int64_t>() + 1;
  write_manifest(dir_.str(), manifest);
  std::ostringstream out;
  EXPECT_EQ(check_goldens(dir_.str(), out), 1) << out.str();
  EXPECT_NE(out.str().find("MANIFEST.json: total_bytes: "), std::string::npos) << out.str();
}

TEST_F(GoldenManifestCheck, PathsOutsideTheDirectoryAreRefusedNamingTheEntry) {
  std::size_t index = 0;
  for (std::size_t k = 0; k < original_.at("cases").size(); ++k) {
    if (original_["cases"][k]["name"] == kCopy) index = k;
  }
  for (const std::string& bad : {std::string("/etc/passwd"), dir_.file(std::string(kCopy) + ".h5"),
                                 std::string("../golden/") + kCopy + ".h5",
                                 std::string("sub/../../") + kCopy + ".h5", std::string("")}) {
    CheckReport report;
    const auto [status, out] = check_with(
        kCopy, [&](nlohmann::json& e) { e["file"] = bad; }, &report);
    EXPECT_EQ(status, 2) << bad << "\n" << out;
    EXPECT_NE(out.find("cases[" + std::to_string(index) + "].file: '" + bad + "'"),
              std::string::npos)
        << bad << "\n"
        << out;
    EXPECT_TRUE(report.manifest_bad);
    EXPECT_THROW(list_goldens(dir_.str()), GoldenError) << bad;
  }
}

TEST_F(GoldenManifestCheck, VerdictsAsJson) {
  CheckReport report;
  const auto [status, out] = check_with(
      kAttention, [](nlohmann::json& e) { e["seed"] = 7; }, &report);
  ASSERT_EQ(status, 1) << out;
  const nlohmann::json doc = nlohmann::json::parse(check_report_json(report, "--dir"));
  EXPECT_EQ(doc.at("schema"), "pagecheck.golden_check/1");
  EXPECT_EQ(doc.at("dir"), dir_.str());
  EXPECT_EQ(doc.at("source"), "--dir");
  EXPECT_EQ(doc.at("exit_code"), 1);
  EXPECT_EQ(doc.at("counts").at("listed"), case_catalogue().size());
  EXPECT_EQ(doc.at("counts").at("ok"), case_catalogue().size() - 1);
  EXPECT_EQ(doc.at("counts").at("failed"), 1);
  int failed = 0;
  for (const auto& c : doc.at("cases")) {
    if (c.at("status") == "ok") continue;
    ++failed;
    EXPECT_EQ(c.at("name"), kAttention);
    EXPECT_EQ(c.at("status"), "failed");
    EXPECT_EQ(c.at("file"), file(kAttention));
    ASSERT_FALSE(c.at("messages").empty());
    EXPECT_NE(c.at("messages")[0].get<std::string>().find("seed"), std::string::npos);
  }
  EXPECT_EQ(failed, 1);
}

}  // namespace
}  // namespace pagecheck::verify::golden
