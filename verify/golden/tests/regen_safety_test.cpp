/// regen under adverse conditions: two regens of one directory at once, a full disk, stale
/// temporaries of interrupted runs, a read-only directory, a folder in a golden's place.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <sstream>

#include "child_process.h"
#include "golden_test_util.h"
#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::verify::golden {
namespace {

using namespace testing;  // NOLINT: the helpers of golden_test_util.h and child_process.h

/// Runs regen in the calling (child) process, its output into `log`.
int regen_into(std::string& log, const std::string& dir, std::vector<std::string> cases,
               bool force) {
  std::ostringstream out;
  const int status = regen_goldens(RegenOptions{dir, std::move(cases), force}, out);
  log += out.str();
  return status;
}

/// Files of `dir` whose name is a regen temporary.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& item : fs::directory_iterator(dir)) {
    long pid = 0;
    if (parse_temporary_name(item.path().filename().string(), &pid)) {
      found.push_back(item.path().string());
    }
  }
  return found;
}

TEST(GoldenRegenSafety, TwoConcurrentRegensKeepEveryManifestEntryValid) {
  // Every golden's content differs from its definition (and the manifest agrees with the
  // files), so both regens replace files: each must merge the other's fresh entries.
  TempDir dir;
  copy_goldens(pristine_goldens(), dir.str());
  std::vector<std::string> even, odd;
  for (std::size_t k = 0; k < case_catalogue().size(); ++k) {
    const std::string& name = case_catalogue()[k].name;
    rewrite(dir.file(name + ".h5"),
            [](GoldenFile& f) { f.attrs["description"] = std::string("edited by the test"); });
    record_in_manifest(dir.str(), name);
    (k % 2 == 0 ? even : odd).push_back(name);
  }
  Child first([&](std::string& log) { return regen_into(log, dir.str(), even, true); });
  Child second([&](std::string& log) { return regen_into(log, dir.str(), odd, true); });
  const ChildResult a = first.wait();
  const ChildResult b = second.wait();
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  std::ostringstream out;
  EXPECT_EQ(check_goldens(dir.str(), out), 0) << out.str() << "\nregen A:\n"
                                              << a.output << "\nregen B:\n"
                                              << b.output;
  EXPECT_EQ(snapshot(dir.str()), snapshot(pristine_goldens()));
}

TEST(GoldenRegenSafety, FullDiskExitsThreeNamingTheFileAndLeavesNoTemporary) {
  TempDir dir;
  copy_goldens(pristine_goldens(), dir.str());
  const std::string name = "pa_long_f16_h64_b16";  // larger than the limit below
  rewrite(dir.file(name + ".h5"),
          [](GoldenFile& f) { f.attrs["description"] = std::string("to be replaced"); });
  record_in_manifest(dir.str(), name);
  const auto before = snapshot(dir.str());
  const ChildResult r = run_in_child([&](std::string& log) {
    // Files may not grow past 64 KiB: writes then fail with EFBIG, as on a full disk.
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 99;
    return regen_into(log, dir.str(), {name}, true);
  });
  EXPECT_EQ(r.status, 3) << r.output;  // not a crash (-11) at HDF5's shutdown
  EXPECT_NE(r.output.find("cannot write golden " + dir.file(name + ".h5")), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
  EXPECT_TRUE(temporaries(dir.str()).empty());
  EXPECT_EQ(snapshot(dir.str()), before) << "a golden or the manifest changed";
}

TEST(GoldenRegenSafety, RemovesStaleTemporariesOfInterruptedRuns) {
  TempDir dir;
  copy_goldens(partial_goldens({"pa_ctx1_f16_h128_b16"}), dir.str());
  const std::string dead_pid = dir.file(".pa_ctx1_f16_h128_b16.h5.999999999.pagecheck-tmp");
  const std::string legacy = dir.file(".pa_ctx1_f16_h128_b16.h5.tmp-999999998");
  const std::string old_live = dir.file(".MANIFEST.json." + std::to_string(getppid()) +
                                        ".pagecheck-tmp");  // a running PID, but left before
  const std::string other = dir.file(".notes");
  for (const std::string& path : {dead_pid, legacy, old_live, other}) put_file_bytes(path, "x");
  fs::last_write_time(old_live, fs::file_time_type::clock::now() - std::chrono::hours(1));
  std::string log;
  ASSERT_EQ(regen_into(log, dir.str(), {"pa_ctx1_f16_h128_b16"}, false), 0) << log;
  for (const std::string& path : {dead_pid, legacy, old_live}) {
    EXPECT_FALSE(fs::exists(path)) << path << "\n" << log;
    EXPECT_NE(log.find("removed   stale temporary " + path), std::string::npos) << log;
  }
  EXPECT_NE(log.find("no longer runs"), std::string::npos) << log;
  EXPECT_NE(log.find("left before this regen took the lock"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(other)) << "a file that is no temporary was removed";
}

TEST(GoldenRegenSafety, TemporaryNamesAreRecognised) {
  long pid = 0;
  EXPECT_TRUE(parse_temporary_name(
      fs::path(verify::temp_path_beside("/x/pa_ctx1.h5")).filename().string(), &pid));
  EXPECT_EQ(pid, getpid());
  EXPECT_TRUE(parse_temporary_name(".a.h5.tmp-42", &pid));
  EXPECT_EQ(pid, 42);
  for (const char* name : {"a.h5", ".a.h5", ".a.h5.tmp-", ".a.h5.tmp-4x", ".pagecheck-tmp",
                           ".a.b.pagecheck-tmp", "a.h5.12.pagecheck-tmp.txt"}) {
    EXPECT_FALSE(parse_temporary_name(name, &pid)) << name;
  }
}

TEST(GoldenRegenSafety, ReadOnlyDirectoryIsBadInputNamingIt) {
  TempDir dir;
  copy_goldens(partial_goldens({"pa_ctx1_f16_h128_b16"}), dir.str());
  fs::permissions(dir.str(),
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  const auto before = snapshot(dir.str());
  const ChildResult r = run_in_child([&](std::string& log) {
    if (geteuid() == 0) {  // root writes anywhere: run as nobody, as a user would
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return 99;
    }
    return regen_into(log, dir.str(), {"pa_ctx1_f16_h128_b16"}, true);
  });
  fs::permissions(dir.str(), fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(dir.str() + ": golden directory is not writable"), std::string::npos)
      << r.output;
  EXPECT_EQ(snapshot(dir.str()), before);
}

TEST(GoldenRegenSafety, AFolderInAGoldensPlaceIsBadInputNamingIt) {
  TempDir dir;
  copy_goldens(partial_goldens({"pa_ctx1_f16_h128_b16"}), dir.str());
  const std::string place = dir.file("pa_ctx1_f16_h128_b16.h5");
  fs::remove(place);
  fs::create_directories(place);
  const auto before = snapshot(dir.str());
  std::ostringstream out;
  try {
    regen_goldens(RegenOptions{dir.str(), {"pa_ctx1_f16_h128_b16"}, true}, out);
    ADD_FAILURE() << "regen accepted a folder in a golden's place";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(place + ": not a regular file"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(snapshot(dir.str()), before);
}

}  // namespace
}  // namespace pagecheck::verify::golden
