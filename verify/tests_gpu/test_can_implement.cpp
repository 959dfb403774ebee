/// Registration and can_implement of the built-in variants: every variant is registered with
/// honest shapes and caps, and refuses what it cannot run with a status and a message naming
/// the field. The arguments are those the one converter (verify/abi) makes of a materialized
/// fixed case, then broken one field at a time. The refusal checks run before any CUDA call,
/// so they need no device; the naive gather on unaligned rows does.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "case_builder.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::gpu_test {
namespace {

void* fake_device_pointer(uintptr_t offset = 0) {
  return reinterpret_cast<void*>(uintptr_t{1} << 20 | offset);
}

#define PAGECHECK_SKIP_WITHOUT_KERNELS()                                                \
  do {                                                                                  \
    if (!builtin_kernels_available()) GTEST_SKIP() << "this build has no CUDA kernels"; \
  } while (0)

/// The device the refusal checks describe (an H200-like one; they make no CUDA call).
const pc_device_info& fake_device() {
  static const pc_device_info info = [] {
    pc_device_info d{};
    d.struct_size = sizeof(pc_device_info);
    d.sm_count = 132;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.max_shared_per_block = 227 * 1024;
    d.l2_bytes = 50 << 20;
    return d;
  }();
  return info;
}

/// A well-formed float16 problem (8 heads, 2 sequences of 64 tokens; head 128 and block 16
/// unless given: valid for the built-ins) as the one converter (verify/abi) hands it to a
/// variant, with fake device pointers.
pc_paged_attention_args valid_attention_args(int64_t head = 128, int64_t block = 16) {
  const ref::PagedAttentionProblem p = gen::materialize(
      AttentionCase(Attention("can_implement", DType::kFloat16, head, block, 8, 8, {64, 64}, 1))
          .spec);
  verify::AttentionPointers ptrs;
  ptrs.query = ptrs.key_cache = ptrs.value_cache = ptrs.out = fake_device_pointer();
  ptrs.context_lens = ptrs.block_table = static_cast<const int32_t*>(fake_device_pointer());
  return verify::attention_args(p, ref::TokenLayout::packed(2, 8, head), ptrs);
}

/// True for a variant whose declaration makes the refusal below moot: it declares the
/// problem's feature (a block size it takes at run time, a generic-stride cache) itself.
using DeclaresIt = bool (*)(const VariantInfo&);
bool declares_nothing_extra(const VariantInfo&) {
  return false;
}
/// Block size as a run-time parameter: a variant that declares block size 1 (v3_gqa) takes any
/// block size, so only compiled-block-size variants must refuse 48.
bool takes_any_block_size(const VariantInfo& v) {
  return std::find(v.block_sizes.begin(), v.block_sizes.end(), 1) != v.block_sizes.end() ||
         std::find(v.block_sizes.begin(), v.block_sizes.end(), 48) != v.block_sizes.end();
}
/// Generic strides: a variant that declares a page layout besides x-split reads any dim_split
/// and any dim stride (element by element where 16-byte loads do not fit).
bool declares_generic_strides(const VariantInfo& v) {
  return (v.variant.cache_kind_mask & ~(1u << PC_CACHE_X_SPLIT)) != 0;
}

/// Runs every attention variant's can_implement on `a` (but those for which `declares` holds);
/// each must return `expected` with a message containing `needle`.
void expect_attention_refusal(const pc_paged_attention_args& a, pc_status expected,
                              const std::string& needle,
                              DeclaresIt declares = &declares_nothing_extra) {
  const auto variants = builtin_registry().family(PC_FAMILY_PAGED_ATTENTION);
  ASSERT_FALSE(variants.empty());
  int checked = 0;
  for (const VariantInfo* v : variants) {
    if (declares(*v)) continue;
    ++checked;
    std::string msg;
    const pc_status st = v->can_implement(fake_device(), &a, &msg);
    EXPECT_EQ(st, expected) << v->name << ": " << msg;
    EXPECT_NE(msg.find(needle), std::string::npos)
        << v->name << ": message '" << msg << "' does not mention '" << needle << "'";
  }
  EXPECT_GT(checked, 0) << "no attention variant left to refuse '" << needle << "'";
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
    // The default PAGECHECK_HEAD_SIZES; the v1 kernels also compile head size 512.
    std::set<int32_t> expected{64, 80, 96, 112, 128, 192, 256};
    if (std::string(name) != "v2_split") expected.insert(512);
    EXPECT_EQ(std::set<int32_t>(v->head_sizes.begin(), v->head_sizes.end()), expected)
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
  expect_attention_refusal(valid_attention_args(72), PC_STATUS_UNSUPPORTED,
                           "unsupported head_size: 72");
}

TEST(CanImplement, AttentionRefusesUncompiledBlockSize) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  expect_attention_refusal(valid_attention_args(128, 48), PC_STATUS_UNSUPPORTED,
                           "unsupported block_size: 48", &takes_any_block_size);
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
  a.cache.key.dim_split = 4;
  expect_attention_refusal(a, PC_STATUS_INVALID_ARGUMENT, "cache.key.dim_split",
                           &declares_generic_strides);
}

TEST(CanImplement, AttentionRefusesMisalignedStrides) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.cache.value.dim = 17;
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "cache.value.dim", &declares_generic_strides);
  a = valid_attention_args();
  a.query = fake_device_pointer(2);
  expect_attention_refusal(a, PC_STATUS_UNSUPPORTED, "query is not 16-byte aligned",
                           &declares_generic_strides);
}

TEST(CanImplement, AttentionRefusesContextBeyondBlockTable) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  pc_paged_attention_args a = valid_attention_args();
  a.batch.max_context_len = a.batch.max_blocks_per_seq * a.cache.block_size + 1;
  expect_attention_refusal(a, PC_STATUS_INVALID_ARGUMENT, "batch.max_context_len");
}

TEST(CanImplement, VectorizedCopiesRefuseUnalignedRowsScalarAccepts) {
  PAGECHECK_SKIP_WITHOUT_KERNELS();
  const ref::CacheCopyProblem p =
      gen::materialize(CopyCase(Copy("rows", DType::kFloat16, 128, 16, 8, 4, 16, 0, 1)).spec);
  verify::CopyPointers ptrs;
  ptrs.key_cache = ptrs.value_cache = ptrs.key = ptrs.value = fake_device_pointer();
  ptrs.slot_mapping = static_cast<const int64_t*>(fake_device_pointer());
  pc_gather_args g = verify::gather_args(p, ptrs);
  g.key_stride_token = 8 * 128 + 1;  // not a multiple of x = 8
  const VariantInfo* vec = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "vectorized");
  const VariantInfo* naive = builtin_registry().find(PC_FAMILY_GATHER_CACHED_KV, "naive");
  ASSERT_NE(vec, nullptr);
  ASSERT_NE(naive, nullptr);
  std::string msg;
  EXPECT_EQ(vec->can_implement(fake_device(), &g, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("key_stride_token"), std::string::npos) << msg;
  EXPECT_EQ(naive->can_implement(fake_device(), &g, &msg), PC_STATUS_OK) << msg;
}

TEST(CanImplement, NaiveGatherCopiesUnalignedRowsExactly) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  ref::CacheCopyProblem p = gen::materialize(
      CopyCase(Copy("unaligned_rows", DType::kFloat16, 64, 8, 2, 9, 4, 4, 7)).spec);
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
