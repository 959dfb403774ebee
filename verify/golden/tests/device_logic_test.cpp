/// The logic of `pagecheck verify --golden` on the CPU: verify_goldens_with over the committed
/// goldens with fake runners in place of the GPU. A runner that returns each golden's expected
/// outputs must pass every golden; a corrupted output, a broken guard zone or a launch failure
/// must fail and name the golden and the variant; a run of nothing must fail.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pagecheck/registry.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::golden {
namespace {

const std::string kDir = PAGECHECK_TEST_GOLDEN_DIR;

/// The committed manifest, parsed here without the library's reader.
nlohmann::json committed_manifest() {
  std::ifstream in(kDir + "/MANIFEST.json");
  if (!in) throw std::runtime_error("cannot read " + kDir + "/MANIFEST.json");
  nlohmann::json manifest;
  in >> manifest;
  return manifest;
}

/// Name of the first committed golden of `family` ("" when none).
std::string first_golden_of(const char* family) {
  const nlohmann::json manifest = committed_manifest();
  for (const auto& entry : manifest.at("cases")) {
    if (entry.at("family") == family) return entry.at("name").get<std::string>();
  }
  return "";
}

pc_status never_launch(const pc_variant*, const pc_device_info*, const void*, void*, void*, char*,
                       size_t) {
  return PC_STATUS_INTERNAL_ERROR;  // the fake runners never launch
}

/// Registers `name` in every family, with the given head sizes and capabilities; `layouts`
/// also declares every page layout, fp8 cache dtype and scale kind and queries of up to 16
/// tokens (else x-split caches of the token dtype, decode only).
void add_fake(VariantRegistry& registry, const char* name, const std::vector<int32_t>& heads,
              uint64_t caps, bool layouts = false) {
  static const int32_t blocks[] = {1, 8, 16, 32};
  for (pc_family family :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    pc_variant v{};
    v.struct_size = sizeof(pc_variant);
    v.name = name;
    v.description = "fake variant of the golden logic test";
    v.family = family;
    v.dtype_mask = (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
    v.head_sizes = heads.data();
    v.num_head_sizes = static_cast<int32_t>(heads.size());
    v.block_sizes = blocks;
    v.num_block_sizes = 4;
    v.caps = caps;
    if (layouts) {
      v.kv_dtype_mask = v.dtype_mask | (1u << PC_DTYPE_FP8_E4M3) | (1u << PC_DTYPE_FP8_E5M2);
      v.cache_kind_mask = (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
      v.scale_kind_mask =
          (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
      v.max_query_len = 16;
    }
    v.launch = never_launch;
    registry.add(v, "test");
  }
}

const std::vector<int32_t> kAllHeads = {32, 64, 80, 96, 112, 128, 192, 256};

/// Every PC_CAP_* flag.
constexpr uint64_t kEveryCap = (uint64_t{PC_CAP_FULL_RANGE} << 1) - 1;

/// "full" declares every capability, layout and KV dtype; "plain" none (skips ALiBi, padded,
/// strided, NHD/HND, fp8 and the attention features).
void add_standard_fakes(VariantRegistry& registry) {
  add_fake(registry, "full", kAllHeads, kEveryCap, true);
  add_fake(registry, "plain", kAllHeads, 0);
}

/// Every committed golden, loaded independently of the code under test, to look up the
/// expected outputs of the problem a runner is handed.
const std::vector<LoadedGolden>& goldens() {
  static const std::vector<LoadedGolden> all = [] {
    std::vector<LoadedGolden> out;
    const nlohmann::json manifest = committed_manifest();
    for (const auto& entry : manifest.at("cases")) {
      out.push_back(load_golden(kDir + "/" + entry.at("file").get<std::string>()));
    }
    return out;
  }();
  return all;
}

const LoadedGolden& golden_of(const ref::PagedAttentionProblem& p) {
  const LoadedGolden* found = nullptr;
  for (const LoadedGolden& g : goldens()) {
    if (g.family != PC_FAMILY_PAGED_ATTENTION || g.attention.query != p.query ||
        g.attention.key_cache != p.key_cache ||
        g.attention.batch.block_table != p.batch.block_table) {
      continue;
    }
    if (found != nullptr) throw std::logic_error("two goldens share the problem " + g.name);
    found = &g;
  }
  if (found == nullptr) throw std::logic_error("no golden has this attention problem");
  return *found;
}

const LoadedGolden& golden_of(pc_family family, const ref::CacheCopyProblem& p) {
  const LoadedGolden* found = nullptr;
  for (const LoadedGolden& g : goldens()) {
    if (g.family != family || g.copy.key != p.key || g.copy.key_cache != p.key_cache ||
        g.copy.slot_mapping != p.slot_mapping) {
      continue;
    }
    if (found != nullptr) throw std::logic_error("two goldens share the problem " + g.name);
    found = &g;
  }
  if (found == nullptr) throw std::logic_error("no golden has this copy problem");
  return *found;
}

/// Changes the top byte of element `index` (exponent bits): far beyond any tolerance.
void corrupt(std::vector<std::byte>& bytes, DType dtype, std::size_t index) {
  const std::size_t element = dtype_size(dtype);
  bytes.at(index * element + element - 1) ^= std::byte{0x40};
}

/// A runner returning each golden's expected outputs; `tamper(golden, variant, outcome,
/// first, second)` may change them (attention: `first` is the output, `second` unused).
using Tamper = std::function<void(const LoadedGolden&, const VariantInfo&, DeviceRunOutcome&,
                                  std::vector<std::byte>&, std::vector<std::byte>&)>;

GoldenRunner expected_runner(Tamper tamper = {}) {
  GoldenRunner r;
  r.paged_attention = [tamper](const VariantInfo& v, const ref::PagedAttentionProblem& p) {
    const LoadedGolden& g = golden_of(p);
    AttentionRun run;
    run.outcome.disposition = LaunchDisposition::kLaunched;
    run.out = g.expected_out;
    std::vector<std::byte> unused;
    if (tamper) tamper(g, v, run.outcome, run.out, unused);
    return run;
  };
  auto copy = [tamper](pc_family family) {
    return [tamper, family](const VariantInfo& v, const ref::CacheCopyProblem& p) {
      const LoadedGolden& g = golden_of(family, p);
      CopyRun run;
      run.outcome.disposition = LaunchDisposition::kLaunched;
      run.first = g.expected_first;
      run.second = g.expected_second;
      if (tamper) tamper(g, v, run.outcome, run.first, run.second);
      return run;
    };
  };
  r.gather_cached_kv = copy(PC_FAMILY_GATHER_CACHED_KV);
  r.reshape_and_cache = copy(PC_FAMILY_RESHAPE_AND_CACHE);
  return r;
}

struct Result {
  int code = -1;
  GoldenTally tally;
  std::string text;
};

Result run_with(const VariantRegistry& registry, const GoldenRunner& runner) {
  Result r;
  std::ostringstream out;
  r.code = verify_goldens_with(registry, kDir, runner, out, &r.tally);
  r.text = out.str();
  return r;
}

TEST(GoldenDeviceLogic, ListGoldensListsEveryManifestCase) {
  const nlohmann::json manifest = committed_manifest();
  const auto listed = list_goldens(kDir);
  ASSERT_GT(manifest.at("cases").size(), 0u);
  ASSERT_EQ(listed.size(), manifest.at("cases").size());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i], kDir + "/" + manifest.at("cases")[i].at("file").get<std::string>());
  }
}

TEST(GoldenDeviceLogic, ExpectedOutputsPassEveryGolden) {
  VariantRegistry registry;
  add_standard_fakes(registry);
  const Result r = run_with(registry, expected_runner());
  const int64_t cases = static_cast<int64_t>(committed_manifest().at("cases").size());
  EXPECT_EQ(r.code, 0) << r.text;
  EXPECT_EQ(r.tally.listed, cases);
  EXPECT_EQ(r.tally.loaded, cases);
  EXPECT_EQ(r.tally.goldens_run, cases) << r.text;
  EXPECT_EQ(r.tally.failed, 0) << r.text;
  // "full" runs every golden; "plain" runs some and skips those needing a capability.
  EXPECT_GE(r.tally.passed, cases + 1) << r.text;
  EXPECT_GT(r.tally.skipped, 0) << r.text;
  EXPECT_EQ(r.tally.passed + r.tally.skipped, 2 * cases);
  for (const LoadedGolden& g : goldens()) {
    EXPECT_NE(r.text.find("ok   " + g.name + " ("), std::string::npos) << g.name << "\n" << r.text;
  }
  EXPECT_NE(r.text.find("plain skip (alibi not declared)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find(std::to_string(cases) + " of " + std::to_string(cases) + " goldens run; " +
                        std::to_string(r.tally.passed) + " passed, 0 failed"),
            std::string::npos)
      << r.text;
}

/// Corrupts one output element of `victim` as run by variant "full" and expects exactly that
/// run to fail, named with `what`.
void expect_one_failure(const std::string& victim, const std::string& what, Tamper tamper) {
  ASSERT_FALSE(victim.empty());
  VariantRegistry registry;
  add_standard_fakes(registry);
  const Result r = run_with(registry, expected_runner(tamper));
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_EQ(r.tally.failed, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL " + victim + " ("), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("full FAIL"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("  FAIL " + victim + " / full: " + what), std::string::npos) << r.text;
}

TEST(GoldenDeviceLogic, CorruptedAttentionOutputFailsNamingGoldenAndVariant) {
  const std::string victim = first_golden_of("paged_attention");
  expect_one_failure(victim, "1 of ",
                     [victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome&,
                              std::vector<std::byte>& out, std::vector<std::byte>&) {
                       if (g.name == victim && v.name == "full")
                         corrupt(out, g.dtype, g.expected_out_f64.size() / 2);
                     });
}

/// Name of the first committed float32 paged-attention golden ("" when none): float32 storage
/// can hold an output moved by a fraction of its tolerance.
std::string first_float32_attention_golden() {
  for (const LoadedGolden& g : goldens()) {
    if (g.family == PC_FAMILY_PAGED_ATTENTION && g.dtype == DType::kFloat32) return g.name;
  }
  return "";
}

/// Moves output element `index` of `g` to expected + `factor` x its tolerance (the harness's
/// one tolerance entry point, verify/tolerance).
void move_by_tolerance(const LoadedGolden& g, std::vector<std::byte>& out, std::size_t index,
                       double factor) {
  ref::PagedAttentionResult expected;
  expected.num_rows = g.attention.batch.num_query_tokens();
  expected.num_heads = g.attention.num_heads;
  expected.head_size = g.attention.head_size();
  expected.out = g.expected_out_f64;
  expected.lse = g.expected_lse;
  const std::vector<double> tol = attention_tolerance(g.attention, expected);
  const float moved = static_cast<float>(g.expected_out_f64.at(index) + factor * tol.at(index));
  std::memcpy(out.data() + index * sizeof(float), &moved, sizeof moved);
}

TEST(GoldenDeviceLogic, AttentionIsJudgedByTheDerivedPerElementTolerance) {
  const std::string victim = first_float32_attention_golden();
  ASSERT_FALSE(victim.empty()) << "no float32 attention golden is committed";
  for (double factor : {0.5, 1.5}) {
    SCOPED_TRACE("error = " + std::to_string(factor) + " x tolerance");
    VariantRegistry registry;
    add_standard_fakes(registry);
    const Result r =
        run_with(registry,
                 expected_runner([&](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome&,
                                     std::vector<std::byte>& out, std::vector<std::byte>&) {
                   if (g.name == victim && v.name == "full") {
                     move_by_tolerance(g, out, g.expected_out_f64.size() / 3, factor);
                   }
                 }));
    EXPECT_EQ(r.code, factor < 1 ? 0 : 1) << r.text;
    EXPECT_EQ(r.tally.failed, factor < 1 ? 0 : 1) << r.text;
    if (factor > 1) {
      EXPECT_NE(r.text.find("  FAIL " + victim + " / full: 1 of "), std::string::npos) << r.text;
    }
  }
}

TEST(GoldenDeviceLogic, NaNAttentionOutputFails) {
  const std::string victim = first_golden_of("paged_attention");
  expect_one_failure(victim, "1 of ",
                     [victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome&,
                              std::vector<std::byte>& out, std::vector<std::byte>&) {
                       if (g.name != victim || v.name != "full") return;
                       const std::size_t element = dtype_size(g.dtype);
                       for (std::size_t b = 0; b < element; ++b)
                         out.at(b) = std::byte{0xFF};  // a NaN
                     });
}

TEST(GoldenDeviceLogic, CorruptedGatherOutputFailsNamingGoldenAndVariant) {
  const std::string victim = first_golden_of("gather_cached_kv");
  expect_one_failure(victim, "value: 1 elements differ, first at 3",
                     [victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome&,
                              std::vector<std::byte>&, std::vector<std::byte>& second) {
                       if (g.name == victim && v.name == "full") corrupt(second, g.dtype, 3);
                     });
}

TEST(GoldenDeviceLogic, CorruptedReshapeCacheFailsNamingGoldenAndVariant) {
  const std::string victim = first_golden_of("reshape_and_cache");
  expect_one_failure(victim, "key_cache: 1 elements differ, first at 0",
                     [victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome&,
                              std::vector<std::byte>& first, std::vector<std::byte>&) {
                       if (g.name == victim && v.name == "full") corrupt(first, g.dtype, 0);
                     });
}

TEST(GoldenDeviceLogic, BrokenGuardZoneFails) {
  const std::string victim = first_golden_of("gather_cached_kv");
  expect_one_failure(victim, "guard zone: key_out: 2 bytes changed",
                     [victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome& o,
                              std::vector<std::byte>&, std::vector<std::byte>&) {
                       if (g.name != victim || v.name != "full") return;
                       o.guards_intact = false;
                       o.guard_report = "key_out: 2 bytes changed after the end, first at +0";
                     });
}

TEST(GoldenDeviceLogic, RefusalSkipsAndLaunchFailureFails) {
  const std::string victim = first_golden_of("reshape_and_cache");
  VariantRegistry registry;
  add_standard_fakes(registry);
  const Result r = run_with(
      registry,
      expected_runner([victim](const LoadedGolden& g, const VariantInfo& v, DeviceRunOutcome& o,
                               std::vector<std::byte>&, std::vector<std::byte>&) {
        if (g.name != victim) return;
        o.disposition =
            v.name == "full" ? LaunchDisposition::kNotSupported : LaunchDisposition::kLaunchFailed;
        o.message = v.name == "full" ? "too big" : "cudaErrorInvalidValue";
      }));
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_EQ(r.tally.failed, 1) << r.text;
  EXPECT_NE(r.text.find("full skip (variant refused: too big)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("  FAIL " + victim + " / plain: launch failed: cudaErrorInvalidValue"),
            std::string::npos)
      << r.text;
}

TEST(GoldenDeviceLogic, StickyErrorStopsWithStatus3) {
  const std::string victim = first_golden_of("paged_attention");
  VariantRegistry registry;
  add_standard_fakes(registry);
  GoldenRunner runner = expected_runner();
  runner.paged_attention = [](const VariantInfo&,
                              const ref::PagedAttentionProblem&) -> AttentionRun {
    throw std::runtime_error("illegal address");
  };
  const Result r = run_with(registry, runner);
  EXPECT_EQ(r.code, 3) << r.text;
  EXPECT_EQ(r.tally.failed, 1) << r.text;
  EXPECT_NE(r.text.find("  FAIL " + victim + " / full: run threw: illegal address"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("unusable after " + victim + "; stopping"), std::string::npos) << r.text;
}

TEST(GoldenDeviceLogic, NothingRunFailsAlthoughTheManifestListsCases) {
  VariantRegistry registry;
  add_fake(registry, "odd_head_only", {24}, 0);  // matches no golden
  const Result r = run_with(registry, expected_runner());
  const int64_t cases = static_cast<int64_t>(committed_manifest().at("cases").size());
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_EQ(r.tally.goldens_run, 0);
  EXPECT_EQ(r.tally.passed + r.tally.failed, 0);
  EXPECT_NE(r.text.find("lists " + std::to_string(cases) + " cases but " + std::to_string(cases) +
                        " were loaded and 0 run"),
            std::string::npos)
      << r.text;
  const Result empty = run_with(VariantRegistry{}, expected_runner());
  EXPECT_EQ(empty.code, 1) << empty.text;
  EXPECT_NE(empty.text.find("no variant of the family"), std::string::npos) << empty.text;
}

}  // namespace
}  // namespace pagecheck::verify::golden
