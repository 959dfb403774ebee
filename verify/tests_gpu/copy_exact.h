#pragma once
/// The bit-exact check of the copy tests (test_cache_copy.cpp, test_copy_layouts.cpp): every
/// built-in variant of a copy family against the reference, over the whole output buffers.
#include <gtest/gtest.h>

#include <cstddef>

#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/device_runner.h"

namespace pagecheck::gpu_test {

/// Runs every built-in variant of `family` (gather_cached_kv or reshape_and_cache) on `p` and
/// compares both output buffers bit for bit with the reference's. The reference runs first, so a
/// build without a device still materializes every case and runs the reference before the skip.
/// A combined reshape compares its one allocation once (run.first holds both halves).
inline void expect_copy_exact(const ref::CacheCopyProblem& p, pc_family family) {
  ref::CacheCopyProblem expected = p;
  const bool gather = family == PC_FAMILY_GATHER_CACHED_KV;
  if (gather) {
    ref::gather_cached_kv(expected);
  } else {
    ref::reshape_and_cache(expected);
  }
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  const auto variants = builtin_registry().family(family);
  ASSERT_FALSE(variants.empty()) << "no " << family_name(family) << " variant registered";
  const std::size_t out_elem = dtype_size(gather ? p.dtype : p.cache.dtype);
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE("variant " + v->name);
    const verify::CopyRun run =
        gather ? verify::run_gather_cached_kv(*v, p) : verify::run_reshape_and_cache(*v, p);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
        << disposition_name(run.outcome.disposition) << ": " << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    EXPECT_EQ(byte_difference(gather ? expected.key : expected.key_cache, run.first, out_elem), "")
        << (gather ? "key_out" : "key_cache");
    if (p.cache.combined && !gather) continue;  // one allocation: run.first holds both halves
    EXPECT_EQ(byte_difference(gather ? expected.value : expected.value_cache, run.second, out_elem),
              "")
        << (gather ? "value_out" : "value_cache");
  }
}

}  // namespace pagecheck::gpu_test
