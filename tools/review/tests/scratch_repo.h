#pragma once
/// A throw-away git repository with a minimal fake kernel tree, for review tests: the three
/// built-in families (gather_cached_kv -> kernels/src/copy/*, paged_attention ->
/// kernels/src/attention/*, reshape_and_cache -> kernels/src/reshape/*), each with variants "a"
/// and "b" unless set_variants says otherwise, and helpers to record evidence the way the tools
/// do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../../bench/tests/synthetic_report.h"
#include "pagecheck/bench/process.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"

namespace pagecheck::review::testing {

namespace fs = std::filesystem;

/// A record entry with the counts in VariantVerification's order, compared bit-exactly.
inline VariantVerification entry(const std::string& name, int64_t cases, uint64_t seed,
                                 int64_t passed, int64_t failed, int64_t not_supported) {
  VariantVerification v;
  v.variant = name;
  v.cases = cases;
  v.seed = seed;
  v.passed = passed;
  v.failed = failed;
  v.not_supported = not_supported;
  v.precision.name = "bit_exact";
  return v;
}

/// A record of `family` at `hash` as the tests record it (device "Test GPU", a fixed UTC date,
/// revision "test", clean tree, no goldens or sanitizers), without variants.
inline VerificationRecord test_record(const std::string& family, const std::string& hash) {
  VerificationRecord r;
  r.family = family;
  r.source_hash = hash;
  r.device = "Test GPU";
  r.date = "2025-01-01T00:00:00Z";
  r.git_revision = "test";
  r.tool_version = "pagecheck test";
  return r;
}

/// The JSON document in the file `path` (the test fails on a parse error).
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class ScratchRepo {
 public:
  /// Creates and `git init`s a fresh directory named after the running test.
  ScratchRepo() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("pagecheck_review_" + std::to_string(::getpid()) + "_" +
                                         info->test_suite_name() + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    git({"init", "-q"});
    write("kernels/families.json", R"({
  "schema": "pagecheck.families/1",
  "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu", "kernels/include/*.h"]},
    {"name": "paged_attention", "sources": ["kernels/src/attention/*", "kernels/include/*.h"]},
    {"name": "reshape_and_cache", "sources": ["kernels/src/reshape/*", "kernels/include/*.h"]}
  ]
})");
    write("kernels/include/plugin.h", "/* fake ABI */\n");
    write("kernels/src/copy/gather.cu", "__global__ void gather() {}\n");
    write("kernels/src/attention/attention.cu", "__global__ void attention() {}\n");
    write("kernels/src/reshape/reshape.cu", "__global__ void reshape() {}\n");
    for (const char* f : kFamilies) variants_[f] = {"a", "b"};
  }
  /// The kernel families of the fake tree (pagecheck's built-in families).
  static constexpr const char* kFamilies[] = {"gather_cached_kv", "paged_attention",
                                              "reshape_and_cache"};
  ~ScratchRepo() { fs::remove_all(root_); }
  ScratchRepo(const ScratchRepo&) = delete;
  ScratchRepo& operator=(const ScratchRepo&) = delete;

  /// Repository root.
  std::string root() const { return root_.string(); }
  /// Writes (creates or replaces) a file, relative to the root.
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel, std::ios::binary | std::ios::trunc) << text;
  }
  /// Runs git in the repository; the test fails when git does.
  std::string git(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"git",
                                     "-C",
                                     root(),
                                     "-c",
                                     "user.name=pagecheck test",
                                     "-c",
                                     "user.email=test@example.invalid",
                                     "-c",
                                     "commit.gpgsign=false"};
    argv.insert(argv.end(), args.begin(), args.end());
    const bench::ProcessResult p = bench::run_process(argv);
    EXPECT_EQ(p.exit_code, 0) << "git " << args.front() << ": " << p.err;
    return p.out;
  }
  /// Commits everything; returns the commit id.
  std::string commit(const std::string& message) const {
    git({"add", "-A"});
    git({"commit", "-q", "-m", message});
    std::string id = git({"rev-parse", "HEAD"});
    return id.substr(0, id.find('\n'));
  }
  /// Current content hash of `family`.
  std::string hash(const std::string& family) const {
    return working_tree_hash(root(), find_family(load_family_sources(root()), family, "test")).hash;
  }
  /// Writes a verification record for the family's current hash.
  std::string record_verification(const std::string& family, int64_t failed = 0) const {
    VerificationRecord r = test_record(family, hash(family));
    const int64_t n = kDefaultCasesPerVariant;
    const std::vector<std::string>& names = variants_.at(family);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const int64_t f = i + 1 == names.size() ? failed : 0;  // failures in the last variant
      r.variants.push_back(entry(names[i], n, 1, n - f, f, 0));
    }
    return write_verification_record(root(), r, false);
  }
  /// Rewrites the JSON of the record of `family`'s current hash through `edit(nlohmann::json&)`,
  /// as a hand edit would (no checks); returns the record's path.
  template <class Edit>
  std::string edit_record_json(const std::string& family, Edit edit) const {
    const std::string path = verification_record_path(root(), family, hash(family));
    nlohmann::json j = read_json(path);
    edit(j);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << j.dump();
    return path;
  }
  /// Writes a bandwidth report for the family's current hash with its first variant ("a")
  /// timed at `medians` (microseconds, noise 1%), and the others 1.5x slower.
  std::string record_bandwidth(const std::string& family,
                               const std::vector<double>& medians) const {
    std::vector<std::vector<bench::testing::Timing>> t(variants_.at(family).size());
    for (std::size_t v = 0; v < t.size(); ++v) {
      for (double m : medians) t[v].push_back({v == 0 ? m : 1.5 * m, 0.01});
    }
    const std::string h = hash(family);
    const std::string path = bandwidth_report_path(root(), family, h);
    fs::create_directories(fs::path(path).parent_path());
    bench::write_report(bench::testing::make_report(family, h, variants_.at(family), t), path);
    return path;
  }
  /// Sets the variant names the records and reports of `family` hold (default "a", "b").
  void set_variants(const std::string& family, std::vector<std::string> names) {
    variants_[family] = std::move(names);
  }
  /// The variant names the records and reports of `family` hold.
  const std::vector<std::string>& variants(const std::string& family) const {
    return variants_.at(family);
  }
  /// Both kinds of evidence for every family.
  void record_all(const std::vector<double>& medians) const {
    for (const char* f : kFamilies) {
      record_verification(f);
      record_bandwidth(f, medians);
    }
  }

 private:
  fs::path root_;
  std::map<std::string, std::vector<std::string>> variants_;
};

/// The registered built-in variant names per family, from `<pagecheck> list --json` (as
/// `pagecheck review` sees them); empty when that build has no built-in kernels.
inline std::map<std::string, std::vector<std::string>> registered_variants(
    const std::string& pagecheck) {
  const bench::ProcessResult p = bench::run_process({pagecheck, "list", "--json"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  const nlohmann::json j = nlohmann::json::parse(p.out);
  std::map<std::string, std::vector<std::string>> out;
  if (!j.at("cuda_kernels").get<bool>()) return out;
  for (const auto& v : j.at("variants")) {
    if (v.at("origin") == "builtin") out[v.at("family")].push_back(v.at("name"));
  }
  return out;
}

/// Makes `repo`'s records and reports hold the registered built-in variants of each family.
inline void use_registered_variants(ScratchRepo& repo, const std::string& pagecheck) {
  for (const auto& [family, names] : registered_variants(pagecheck)) {
    repo.set_variants(family, names);
  }
}

}  // namespace pagecheck::review::testing
