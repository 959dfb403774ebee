/// The output options' checks (output_path.h): what is refused, in which words, and that a
/// check leaves nothing behind.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "pagecheck/verify/output_path.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::verify {
namespace {

namespace fs = std::filesystem;

/// A fresh folder under the temp dir, removed with its contents at the end of the test.
class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pagecheck-output-path-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string at(const std::string& rel) const { return (root_ / rel).string(); }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(at(rel)).parent_path());
    std::ofstream(at(rel)) << text;
  }
  /// Every path below the scratch folder.
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(root_)) names.insert(e.path().string());
    return names;
  }

  fs::path root_;
};

/// The message of the refusal of `check`, or "" when it passed.
template <typename Check>
std::string refusal(Check check) {
  try {
    check();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST_F(Scratch, FilesThatCannotBeWrittenAreRefusedNamingOptionAndPath) {
  fs::create_directories(at("folder"));
  const auto file = [](const std::string& p) {
    return refusal([&] { check_output_file(p, "--json"); });
  };
  EXPECT_NE(file(at("folder")).find("--json: '" + at("folder") + "' is a folder"),
            std::string::npos);
  EXPECT_NE(file(at("missing/r.json")).find("does not exist"), std::string::npos);
  EXPECT_NE(file(at("new/")).find("names a folder"), std::string::npos);
  // access(2) lets root write into /proc, but no file can be made there: refused before work.
  EXPECT_NE(file("/proc/pagecheck-r.json").find("is not writable"), std::string::npos);
  EXPECT_EQ(file(""), "") << "an option not given passes";
  EXPECT_EQ(file(at("r.json")), "");
}

TEST_F(Scratch, ChecksLeaveNothingBehind) {
  put("old.json", "mine");
  const auto before = listing();
  check_output_file(at("r.json"), "--json");
  check_output_file(at("old.json"), "--json");
  check_output_folder(at("runs/a/b"), "--artifacts");
  check_output_folder(root_.string(), "--artifacts");
  EXPECT_EQ(listing(), before);
}

TEST_F(Scratch, AnInputIsNeverAnOutput) {
  put("a.json", "{}");
  put("goldens/MANIFEST.json", "{}");
  const std::vector<std::string> inputs = {at("a.json"), at("goldens")};
  const auto file = [&](const std::string& p) {
    return refusal([&] { check_output_file(p, "--markdown", inputs); });
  };
  EXPECT_NE(file(at("a.json")).find("is an input of this command"), std::string::npos);
  // Another spelling of the same file.
  EXPECT_NE(file(at("goldens/../a.json")).find("is an input"), std::string::npos);
  EXPECT_NE(file(at("goldens/MANIFEST.json")).find("lies in '" + at("goldens") + "'"),
            std::string::npos);
  EXPECT_NE(file(at("goldens/new.json")).find("an input of this command"), std::string::npos);
  EXPECT_EQ(file(at("b.json")), "");
  EXPECT_NE(refusal([&] {
              check_output_folder(at("goldens/arts"), "--artifacts", inputs);
            }).find("--artifacts: "),
            std::string::npos);
  EXPECT_EQ(refusal([&] { check_output_folder(at("arts"), "--artifacts", inputs); }), "");
}

TEST_F(Scratch, RecordedEvidenceIsWrittenOnlyByTheRecordingCommands) {
  put(kRepoRootMarker, "{}");
  for (const char* folder : kEvidenceFolders) {
    put(std::string(folder) + "/x.json", "{}");
    for (const std::string name : {"x.json", "new.md"}) {
      const std::string p = at(std::string(folder) + "/" + name);
      EXPECT_NE(refusal([&] {
                  check_output_file(p, "--json");
                }).find(std::string("lies in ") + folder + ", the repository's recorded"),
                std::string::npos)
          << p;
    }
  }
  EXPECT_EQ(refusal([&] { check_output_file(at("fixtures/review.md"), "--json"); }), "");
  put("build/keep", "");
  EXPECT_EQ(refusal([&] { check_output_file(at("build/review.md"), "--json"); }), "");
}

TEST_F(Scratch, FolderOutputs) {
  put("plain", "x");
  EXPECT_NE(refusal([&] {
              check_output_folder(at("plain"), "--artifacts");
            }).find("--artifacts: '" + at("plain") + "' is not a folder"),
            std::string::npos);
  EXPECT_NE(
      refusal([&] { check_output_folder(at("plain/sub"), "--artifacts"); }).find("is not a folder"),
      std::string::npos);
  EXPECT_EQ(refusal([&] { check_output_folder("", "--artifacts"); }), "");
}

}  // namespace
}  // namespace pagecheck::verify
