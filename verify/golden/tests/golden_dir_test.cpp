/// Which golden directory a command uses (given, $PAGECHECK_FIXTURES_DIR, or the repository
/// found from the current directory) and what is refused (output paths: verify/util/tests).
#include <gtest/gtest.h>

#include <cstdlib>

#include "golden_test_util.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::verify::golden {
namespace {

using namespace testing;  // NOLINT: the helpers of golden_test_util.h

/// A fake repository (marker file + a golden folder with a manifest), entered for the test's
/// duration; the previous working directory and $PAGECHECK_FIXTURES_DIR are restored.
class GoldenDirResolution : public ::testing::Test {
 protected:
  void SetUp() override {
    old_cwd_ = fs::current_path();
    if (const char* env = std::getenv("PAGECHECK_FIXTURES_DIR")) old_env_ = env;
    unsetenv("PAGECHECK_FIXTURES_DIR");
    fs::create_directories(repo_.file("kernels"));
    fs::create_directories(repo_.file("fixtures/golden"));
    fs::create_directories(repo_.file("a/b"));
    put_file_bytes(repo_.file(kRepoRootMarker), "{}");
    put_file_bytes(repo_.file("fixtures/golden/MANIFEST.json"), "{}");
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    if (old_env_) setenv("PAGECHECK_FIXTURES_DIR", old_env_->c_str(), 1);
  }
  std::string golden() const { return repo_.file("fixtures/golden"); }

  TempDir repo_;
  TempDir outside_;
  fs::path old_cwd_;
  std::optional<std::string> old_env_;
};

TEST_F(GoldenDirResolution, FoundFromTheCurrentDirectory) {
  fs::current_path(repo_.file("a/b"));
  const GoldenDir dir = resolve_golden_dir("", "--dir");
  EXPECT_EQ(dir.path, golden());
  EXPECT_EQ(dir.describe(), golden() + " (found from the current directory)");
  EXPECT_EQ(find_repo_root(repo_.file("a/b")), repo_.str());
}

TEST_F(GoldenDirResolution, GivenDirectoryWinsAndIsMadeAbsolute) {
  fs::current_path(repo_.str());
  const GoldenDir dir = resolve_golden_dir("fixtures/golden", "--golden-dir");
  EXPECT_EQ(dir.path, golden());
  EXPECT_EQ(dir.source, "--golden-dir");
}

TEST_F(GoldenDirResolution, EnvironmentVariableNamesTheFixturesRoot) {
  fs::current_path(outside_.str());
  setenv("PAGECHECK_FIXTURES_DIR", repo_.file("fixtures").c_str(), 1);
  const GoldenDir dir = resolve_golden_dir("", "--dir");
  EXPECT_EQ(dir.path, golden());
  EXPECT_EQ(dir.source, "$PAGECHECK_FIXTURES_DIR");
}

TEST_F(GoldenDirResolution, RefusesWhatIsNoGoldenDirectory) {
  fs::current_path(outside_.str());
  const auto refused = [](const std::string& given, GoldenDirUse use, const std::string& words) {
    try {
      (void)resolve_golden_dir(given, "--dir", use);
      ADD_FAILURE() << "accepted '" << given << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("--dir: ", 0), 0u) << e.what();
    }
  };
  refused("", GoldenDirUse::kRead, "no repository found from the current directory");
  refused(outside_.file("missing"), GoldenDirUse::kRead, outside_.file("missing") + " (--dir)");
  refused(repo_.file(kRepoRootMarker), GoldenDirUse::kRead, "is not a directory");
  refused(outside_.str(), GoldenDirUse::kRead, "holds no MANIFEST.json");
  EXPECT_NO_THROW(resolve_golden_dir(outside_.str(), "--dir", GoldenDirUse::kWrite));
  fs::create_directories(outside_.file("MANIFEST.json"));
  refused(outside_.str(), GoldenDirUse::kWrite, outside_.file("MANIFEST.json"));
  refused(outside_.str(), GoldenDirUse::kRead, outside_.file("MANIFEST.json"));
}

}  // namespace
}  // namespace pagecheck::verify::golden
