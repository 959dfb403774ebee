/// GPU smoke test of the bench harness (skips without a device): the quick sweep with the
/// test's own gather variants, then with every built-in variant of every family.
#include <gtest/gtest.h>

#include <sstream>

#include "pagecheck/bench/render.h"
#include "pagecheck/bench/runner.h"
#include "smoke_variants.h"

namespace pagecheck::bench {
namespace {

BenchOptions quick_options() {
  BenchOptions o;
  o.min_samples = 5;
  o.max_samples = 30;
  o.timeout_s = 0.5;
  o.ceiling_bytes = 256ll << 20;
  return o;
}

void expect_sane(const BenchReport& r) {
  EXPECT_GT(r.copy_ceiling.gbps, 0);
  EXPECT_GT(r.read_ceiling.gbps, 0);
  EXPECT_GE(r.method.l2_flush_bytes, 2 * r.environment.l2_bytes);
  // The launch floor: measured, positive, and no kernel launch timed below it.
  ASSERT_TRUE(r.launch_floor.measured());
  EXPECT_GT(r.launch_floor.time_us.median, 0);
  EXPECT_FALSE(r.environment.device.empty());
  for (const auto& sr : r.shapes) {
    for (const auto& v : sr.variants) {
      if (v.status != RunStatus::kOk) continue;
      EXPECT_GT(v.time_us.median, 0) << sr.shape.label << " " << v.variant;
      EXPECT_GE(v.time_us.samples, 5);
      EXPECT_GT(v.gbps, 0);
      // Never above the ceiling's tolerance without the flag.
      EXPECT_EQ(v.above_ceiling, v.ceiling_share > 1.05) << sr.shape.label << " " << v.variant;
      EXPECT_FALSE(marked_below_floor(v, r.launch_floor))
          << sr.shape.label << " " << v.variant << ": " << v.time_us.median << " us, floor "
          << r.launch_floor.time_us.median << " us";
    }
  }
}

TEST(BenchGpuSmoke, TestVariantsMeasuredAndBrokenVariantCaught) {
  std::string why;
  if (!bench_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  VariantRegistry registry;
  registry.add(testing::smoke_gather_variant(), "test");
  registry.add(testing::smoke_lazy_variant(), "test");
  std::ostringstream log;
  const auto shapes = builtin_sweep(PC_FAMILY_GATHER_CACHED_KV, true);
  const BenchReport r = run_bench(registry, PC_FAMILY_GATHER_CACHED_KV,
                                  {"smoke_gather", "smoke_lazy"}, shapes, quick_options(), &log);
  ASSERT_EQ(r.shapes.size(), shapes.size());
  for (const auto& sr : r.shapes) {
    ASSERT_EQ(sr.variants.size(), 2u);
    if (!shape_suffix(sr.shape).empty()) {  // an NHD / fp8 row: the smoke variants declare neither
      for (const auto& v : sr.variants) {
        EXPECT_EQ(v.status, RunStatus::kUnsupported) << sr.shape.label << " " << v.variant;
        EXPECT_NE(v.message.find("declares no"), std::string::npos) << v.message;
      }
      continue;
    }
    EXPECT_EQ(sr.variants[0].status, RunStatus::kOk) << sr.variants[0].message;
    EXPECT_EQ(sr.variants[1].status, RunStatus::kFailed);
    EXPECT_NE(sr.variants[1].message.find("output check"), std::string::npos)
        << sr.variants[1].message;
  }
  expect_sane(r);
  EXPECT_NE(log.str().find("ceilings:"), std::string::npos);
}

TEST(BenchGpuSmoke, BuiltinVariantsQuickSweep) {
  std::string why;
  if (!bench_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  VariantRegistry registry;
  register_builtin_kernels(registry);
  if (registry.variants().empty()) GTEST_SKIP() << "this build registers no built-in kernels";
  for (pc_family f :
       {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE, PC_FAMILY_PAGED_ATTENTION}) {
    std::vector<std::string> names;
    for (const auto* v : registry.family(f)) names.push_back(v->name);
    if (names.empty()) continue;
    const BenchReport r =
        run_bench(registry, f, names, builtin_sweep(f, true), quick_options(), nullptr);
    for (const auto& sr : r.shapes) {
      for (const auto& v : sr.variants) {
        EXPECT_NE(v.status, RunStatus::kFailed)
            << family_name(f) << " " << sr.shape.label << " " << v.variant << ": " << v.message;
      }
    }
    expect_sane(r);
  }
}

}  // namespace
}  // namespace pagecheck::bench
