/// Registration and can_implement of the built-in variants: every variant is registered with
/// honest shapes and caps, and refuses what it cannot run with a status and a message naming
/// the field. The refusal checks run before any CUDA call, so they need no device; the naive
/// gather on unaligned rows does.
#include <gtest/gtest.h>

#include <set>

#include "case_builder.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"

namespace pagecheck::gpu_test {
namespace {

void* fake_device_pointer(uintptr_t offset = 0) {
  return reinterpret_cast<void*>(uintptr_t{1} << 20 | offset);
}

#define PAGECHECK_SKIP_WITHOUT_KERNELS()                                                \
  do {                                                                                  \
    if (!builtin_kernels_available()) GTEST_SKIP() << "this build has no CUDA kernels"; \
  } while (0)

/// A valid float16 problem description (head 128, block 16, 8 heads, 2 sequences).
pc_paged_attention_args valid_attention_args() {
  pc_paged_attention_args a{};
  a.dtype = PC_DTYPE_FLOAT16;
  a.num_seqs = 2;
  a.num_heads = 8;
  a.max_blocks_per_seq = 4;
  a.max_context_len = 64;
  a.scale = 0.088f;
  a.query = fake_device_pointer();
  a.query_stride_seq = 8 * 128;
  a.query_stride_head = 128;
  a.key_cache = fake_device_pointer();
  a.value_cache = fake_device_pointer();
  a.cache = pc_cache_layout{16,       8,      128, 16,           8,        8 * 128 * 16,
                            128 * 16, 16 * 8, 8,   8 * 128 * 16, 128 * 16, 16};
  a.block_table = static_cast<const int32_t*>(fake_device_pointer());
  a.block_table_stride = 4;
  a.context_lens = static_cast<const int32_t*>(fake_device_pointer());
  a.out = fake_device_pointer();
  a.out_stride_seq = 8 * 128;
  a.out_stride_head = 128;
  return a;
}

/// Runs every attention variant's can_implement on `a`; each must return `expected` with a
/// message containing `needle`.
void expect_attention_refusal(const pc_paged_attention_args& a, pc_status expected,
                              const std::string& needle) {
  const auto variants = builtin_registry().family(PC_FAMILY_PAGED_ATTENTION);
  ASSERT_FALSE(variants.empty());
  for (const VariantInfo* v : variants) {
    char msg[512] = {0};
    const pc_status st = v->variant.can_implement(&v->variant, &a, msg, sizeof msg);
    EXPECT_EQ(st, expected) << v->name << ": " << msg;
    EXPECT_NE(std::string(msg).find(needle), std::string::npos)
        << v->name << ": message '" << msg << "' does not mention '" << needle << "'";
  }
}

TEST(Registry, BuiltinVariantsRegistered) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  const VariantRegistry& r = builtin_registry();
  for (const char* name : {"v1_baseline", "v1_shared_q", "v2_split"}) {
    const VariantInfo* v = r.find(PC_FAMILY_PAGED_ATTENTION, name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->origin, "builtin");
    EXPECT_NE(v->variant.caps & PC_CAP_ALIBI, 0u) << name;
    EXPECT_NE(v->variant.caps & PC_CAP_LARGE_CACHE, 0u) << name;
    EXPECT_EQ(std::set<int32_t>(v->head_sizes.begin(), v->head_sizes.end()),
              (std::set<int32_t>{64, 80, 96, 112, 128, 192, 256}))
        << name << " (differs from the default PAGECHECK_HEAD_SIZES?)";
    for (pc_dtype d : {PC_DTYPE_FLOAT32, PC_DTYPE_FLOAT16, PC_DTYPE_BFLOAT16}) {
      EXPECT_TRUE(v->supports(d, 128, 16)) << name;
    }
  }
  EXPECT_NE(r.find(PC_FAMILY_GATHER_CACHED_KV, "naive"), nullptr);
  EXPECT_NE(r.find(PC_FAMILY_GATHER_CACHED_KV, "vectorized"), nullptr);
  EXPECT_NE(r.find(PC_FAMILY_RESHAPE_AND_CACHE, "scalar"), nullptr);
  EXPECT_NE(r.find(PC_FAMILY_RESHAPE_AND_CACHE, "vectorized"), nullptr);
}

TEST(CanImplement, AttentionRefusesUncompiledHeadSize) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.cache.head_size = 72;
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "unsupported head_size: 72");
}

TEST(CanImplement, AttentionRefusesUncompiledBlockSize) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.cache.block_size = 64;
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "unsupported block_size: 64");
}

TEST(CanImplement, AttentionRefusesHeadsNotMultipleOfKvHeads) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.num_heads = 6;
  a.cache.num_kv_heads = 4;
  expect_attention_refusal(a, PC_STATUS_INVALID_ARGUMENT, "num_kv_heads");
}

TEST(CanImplement, AttentionRefusesWrongX) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.cache.x = 4;
  expect_attention_refusal(a, PC_STATUS_INVALID_ARGUMENT, "cache.x");
}

TEST(CanImplement, AttentionRefusesMisalignedStrides) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.cache.value_stride_dim = 17;
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "value_stride_dim");
  a = valid_attention_args();
  a.query = fake_device_pointer(2);
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "query is not 16-byte aligned");
}

TEST(CanImplement, AttentionRefusesContextBeyondBlockTable) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.max_context_len = 65;
  expect_attention_refusal(a, PC_STATUS_INVALID_ARGUMENT, "max_context_len");
}

TEST(CanImplement, VectorizedCopiesRefuseUnalignedRowsScalarAccepts) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_gather_args g{};
  g.dtype = PC_DTYPE_FLOAT16;
  g.num_tokens = 4;
  g.key_cache = g.value_cache = fake_device_pointer();
  g.cache = valid_attention_args().cache;
  g.slot_mapping = static_cast<const int64_t*>(fake_device_pointer());
  g.key_out = g.value_out = fake_device_pointer();
  g.key_stride_token = 8 * 128 + 1;  // not a multiple of x = 8
  g.key_stride_head = 128;
  g.value_stride_token = 8 * 128;
  g.value_stride_head = 128;
  char msg[512] = {0};
  const VariantInfo* vec = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "vectorized");
  const VariantInfo* naive = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "naive");
  ASSERT_NE(vec, nullptr);
  ASSERT_NE(naive, nullptr);
  EXPECT_EQ(vec->variant.can_implement(&vec->variant, &g, msg, sizeof msg), PC_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(msg).find("key_stride_token"), std::string::npos) << msg;
  EXPECT_EQ(naive->variant.can_implement(&naive->variant, &g, msg, sizeof msg), PC_STATUS_OK)
      << msg;
}

TEST(CanImplement, NaiveGatherCopiesUnalignedRowsExactly) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  CopyCase c;
  c.name = "unaligned_rows";
  c.dtype = DType::kFloat16;
  c.head_size = 64;
  c.block_size = 8;
  c.num_kv_heads = 2;
  c.num_tokens = 9;
  c.num_blocks = 4;
  c.skip_every = 4;
  c.seed = 7;
  ref::CacheCopyProblem p = build_gather_problem(c);
  p.key_layout.stride_token = 2 * 64 + 3;  // breaks 16-byte alignment of the rows
  p.key.assign(static_cast<std::size_t>(p.key_layout.span()) * 2, std::byte{0xFF});
  ref::CacheCopyProblem expected = p;
  ref::gather_cached_kv(expected);
  const VariantInfo* naive = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "naive");
  const VariantInfo* vec = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "vectorized");
  ASSERT_NE(naive, nullptr);
  ASSERT_NE(vec, nullptr);
  const verify::CopyRun run = verify::run_gather_cached_kv(*naive, p);
  ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched) << run.outcome.message;
  EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
  EXPECT_EQ(byte_difference(expected.key, run.first, 2), "");
  EXPECT_EQ(byte_difference(expected.value, run.second, 2), "");
  const verify::CopyRun refused = verify::run_gather_cached_kv(*vec, p);
  EXPECT_EQ(refused.outcome.disposition, verify::LaunchDisposition::kNotSupported)
      << refused.outcome.message;
}

}  // namespace
}  // namespace pagecheck::gpu_test
