/// RapidCheck property tests of every built-in variant on the GPU: each variant is verified
/// on random layouts (the same generators, poison and tolerances as `pagecheck verify`), in
/// worker processes started from this binary, so a faulting kernel fails its test instead of
/// ending the binary. Skips without a CUDA device. GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS
/// split the variants across shards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "pagecheck/registry.h"
#include "pagecheck/verify/check/device_worker.h"

namespace pagecheck::verify {
namespace {

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

/// "family/variant" of every built-in variant (host-side registration, no CUDA call).
std::vector<std::string> builtin_variants() {
  VariantRegistry registry;
  register_builtin_kernels(registry);
  std::vector<std::string> out;
  for (const auto& v : registry.variants()) {
    out.push_back(std::string(family_name(v->variant.family)) + "/" + v->name);
  }
  if (out.empty()) out.push_back("none/none");  // a build without kernels: one skipping test
  return out;
}

class VariantProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantProperty, MatchesTheReferenceOnRandomLayouts) {
  if (GetParam() == "none/none") GTEST_SKIP() << "no CUDA device: this build has no kernels";
  check::WorkerSession session(self_exe(), {env_int("PAGECHECK_DEVICE", 0), false, false, {}}, 300);
  if (!session.gpu_available()) GTEST_SKIP() << "no CUDA device: " << session.reason();
  std::vector<check::Target> targets;
  for (const auto& t : session.targets({"builtin"})) {
    if (std::string(family_name(t.caps.family)) + "/" + t.caps.name == GetParam())
      targets.push_back(t);
  }
  ASSERT_EQ(targets.size(), 1u) << GetParam() << " is not served by the worker";
  check::VerifyOptions o;
  o.cases = env_int("PAGECHECK_PROP_CASES", 100);
  o.seed = static_cast<uint64_t>(env_int("PAGECHECK_PROP_SEED", 1));
  o.jobs = check::WorkerSession::default_jobs();
  o.ref_threads = check::WorkerSession::default_ref_threads(o.jobs);
  o.artifact_dir = (std::filesystem::temp_directory_path() / "pagecheck-gpu-props").string();
  o.device = session.device();
  const check::RunReport report = check::run_verification(targets, o, session.factory());
  std::ostringstream summary;
  check::print_summary(summary, report);
  EXPECT_EQ(report.exit_code(), 0) << summary.str();
  EXPECT_GT(report.variants.at(0).passed, 0) << summary.str();
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Builtin, VariantProperty, ::testing::ValuesIn(builtin_variants()),
                         test_name);

}  // namespace
}  // namespace pagecheck::verify

int main(int argc, char** argv) {
  // The binary is its own worker process.
  if (argc >= 2 && std::strcmp(argv[1], "verify-worker") == 0) {
    pagecheck::verify::check::WorkerOptions options;
    for (int i = 2; i < argc; ++i) {
      if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc)
        options.device = std::atoi(argv[++i]);
    }
    return pagecheck::verify::check::run_verify_worker(options);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
