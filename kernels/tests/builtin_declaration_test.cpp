// The built-in variants' version-2 declarations and the host-side refusals of their
// can_implement (CPU only: can_implement never touches the device when the pc_device_info
// carries the shared-memory limit). Skipped in builds without the CUDA kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention_params.h"
#include "pagecheck/registry.h"

namespace pagecheck {
namespace {

pc_device_info h200() {
  pc_device_info d{};
  d.struct_size = sizeof d;
  d.sm_count = 132;
  d.cc_major = 9;
  d.max_shared_per_block = 232448;
  d.l2_bytes = 60 << 20;
  return d;
}

const void* aligned(uintptr_t n) {
  return reinterpret_cast<const void*>(n << 12);
}

/// A valid float16 decode call: 4 sequences, 8/2 heads, head 128, block 16, packed x-split.
pc_paged_attention_args decode_args() {
  pc_paged_attention_args a{};
  a.struct_size = sizeof a;
  a.dtype = PC_DTYPE_FLOAT16;
  a.num_heads = 8;
  a.scale = 0.125f;
  a.query = aligned(1);
  a.query_stride_token = 8 * 128;
  a.query_stride_head = 128;
  a.key_cache = aligned(2);
  a.value_cache = aligned(3);
  pc_kv_cache& c = a.cache;
  c.struct_size = sizeof c;
  c.kind = PC_CACHE_X_SPLIT;
  c.dtype = PC_DTYPE_FLOAT16;
  c.num_blocks = 64;
  c.num_kv_heads = 2;
  c.head_size = 128;
  c.block_size = 16;
  c.key = {2 * 128 * 16, 128 * 16, 8, 16 * 8, 1, 8};
  c.value = {2 * 128 * 16, 128 * 16, 1, 0, 16, 128};
  pc_ragged_batch& b = a.batch;
  b.struct_size = sizeof b;
  b.num_seqs = 4;
  b.num_query_tokens = 4;
  b.max_query_len = 1;
  b.context_lens = static_cast<const int32_t*>(aligned(4));
  b.block_table = static_cast<const int32_t*>(aligned(5));
  b.block_table_stride = 16;
  b.max_blocks_per_seq = 16;
  b.max_context_len = 200;
  a.features.struct_size = sizeof a.features;
  a.features.causal = 1;
  a.out = const_cast<void*>(aligned(6));
  a.out_stride_token = 8 * 128;
  a.out_stride_head = 128;
  return a;
}

class Builtins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!builtin_kernels_available()) GTEST_SKIP() << "no CUDA kernels in this build";
    register_builtin_kernels(registry);
  }
  VariantRegistry registry;
};

TEST_F(Builtins, DeclareTheDecodeSubsetTheyImplement) {
  ASSERT_EQ(registry.variants().size(), 7u);
  for (const auto& v : registry.variants()) {
    SCOPED_TRACE(v->name);
    EXPECT_EQ(v->abi_version, 2);
    EXPECT_EQ(v->origin, "builtin");
    EXPECT_TRUE(v->supports_cache_kind(PC_CACHE_X_SPLIT));
    EXPECT_FALSE(v->supports_cache_kind(PC_CACHE_NHD));
    EXPECT_FALSE(v->supports_cache_kind(PC_CACHE_HND));
    EXPECT_TRUE(v->supports_kv_dtype(PC_DTYPE_BFLOAT16, PC_DTYPE_BFLOAT16));
    EXPECT_FALSE(v->supports_kv_dtype(PC_DTYPE_FLOAT16, PC_DTYPE_FP8_E4M3));
    EXPECT_TRUE(v->supports_scale_kind(PC_SCALE_NONE));
    EXPECT_FALSE(v->supports_scale_kind(PC_SCALE_PER_TENSOR));
    EXPECT_EQ(v->max_query_len(), 1);
    EXPECT_EQ(v->variant.context0, PC_CONTEXT0_UNSUPPORTED);
    EXPECT_EQ(v->variant.precision.struct_size, sizeof(pc_precision));
    EXPECT_EQ(v->variant.precision.qk_accum, PC_ACCUM_FLOAT32);
    EXPECT_EQ(v->variant.precision.pv_accum, PC_ACCUM_FLOAT32);
    EXPECT_EQ(v->variant.precision.rounded, 0u);
    EXPECT_FALSE(v->nondeterministic());
    EXPECT_TRUE(v->has_caps(PC_CAP_LARGE_CACHE | PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE |
                            PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD | PC_CAP_CACHE_PAD_SHARED));
    EXPECT_EQ(v->has_caps(PC_CAP_ALIBI), v->variant.family == PC_FAMILY_PAGED_ATTENTION);
    for (uint64_t cap : {PC_CAP_COMBINED_KV, PC_CAP_SINKS, PC_CAP_WINDOW, PC_CAP_SOFT_CAP,
                         PC_CAP_NON_CAUSAL, PC_CAP_DEQUANTIZE}) {
      EXPECT_FALSE(v->has_caps(cap)) << cap;
    }
    const std::vector<int32_t> declared(kernels::kPartitionSizes.begin(),
                                        kernels::kPartitionSizes.end());
    EXPECT_EQ(v->partition_sizes, v->name == "v2_split" ? declared : std::vector<int32_t>{});
  }
}

TEST_F(Builtins, AttentionRefusesWhatTheKernelsCannotDo) {
  struct Case {
    pc_status status;
    const char* expected;
    void (*change)(pc_paged_attention_args&);
  };
  const Case cases[] = {
      {PC_STATUS_UNSUPPORTED, "only x-split",
       [](pc_paged_attention_args& a) { a.cache.kind = PC_CACHE_NHD; }},
      {PC_STATUS_UNSUPPORTED, "cache.dtype fp8_e4m3",
       [](pc_paged_attention_args& a) { a.cache.dtype = PC_DTYPE_FP8_E4M3; }},
      {PC_STATUS_UNSUPPORTED, "unsupported dtype: fp8_e5m2",
       [](pc_paged_attention_args& a) { a.dtype = a.cache.dtype = PC_DTYPE_FP8_E5M2; }},
      {PC_STATUS_UNSUPPORTED, "cache.dtype bfloat16",
       [](pc_paged_attention_args& a) { a.cache.dtype = PC_DTYPE_BFLOAT16; }},
      {PC_STATUS_UNSUPPORTED, "scale",
       [](pc_paged_attention_args& a) { a.cache.scale_kind = PC_SCALE_PER_KV_HEAD; }},
      {PC_STATUS_UNSUPPORTED, "combined", [](pc_paged_attention_args& a) { a.cache.combined = 1; }},
      {PC_STATUS_UNSUPPORTED, "decode only",
       [](pc_paged_attention_args& a) {
         a.batch.query_start = a.batch.context_lens;
         a.batch.num_query_tokens = 9;
         a.batch.max_query_len = 3;
       }},
      {PC_STATUS_UNSUPPORTED, "decode only",
       [](pc_paged_attention_args& a) { a.batch.max_query_len = 2; }},
      {PC_STATUS_UNSUPPORTED, "sinks",
       [](pc_paged_attention_args& a) {
         a.features.sinks = static_cast<const float*>(aligned(7));
       }},
      {PC_STATUS_UNSUPPORTED, "window", [](pc_paged_attention_args& a) { a.features.window = 64; }},
      {PC_STATUS_UNSUPPORTED, "soft-cap",
       [](pc_paged_attention_args& a) { a.features.soft_cap = 50.0f; }},
      {PC_STATUS_UNSUPPORTED, "cache.key.dim",
       [](pc_paged_attention_args& a) { a.cache.key.dim = 2; }},
      {PC_STATUS_UNSUPPORTED, "cache.value.slot",
       [](pc_paged_attention_args& a) { a.cache.value.slot = 128; }},
      {PC_STATUS_INVALID_ARGUMENT, "cache.key.dim_split",
       [](pc_paged_attention_args& a) { a.cache.key.dim_split = 4; }},
      {PC_STATUS_INVALID_ARGUMENT, "num_query_tokens",
       [](pc_paged_attention_args& a) { a.batch.num_query_tokens = 5; }},
      {PC_STATUS_INVALID_ARGUMENT, "args.batch.struct_size",
       [](pc_paged_attention_args& a) { a.batch.struct_size = 0; }},
      {PC_STATUS_INVALID_ARGUMENT, "args.struct_size",
       [](pc_paged_attention_args& a) { a.struct_size = 0; }},
      {PC_STATUS_UNSUPPORTED, "shared memory",
       [](pc_paged_attention_args& a) {
         a.batch.max_blocks_per_seq = a.batch.block_table_stride = 8192;
         a.batch.max_context_len = 100000;
       }},
  };
  for (const VariantInfo* v : registry.family(PC_FAMILY_PAGED_ATTENTION)) {
    SCOPED_TRACE(v->name);
    std::string msg;
    const pc_paged_attention_args valid = decode_args();
    ASSERT_EQ(v->can_implement(h200(), &valid, &msg), PC_STATUS_OK) << msg;
    EXPECT_EQ(v->workspace_bytes(h200(), &valid) > 0, v->name == "v2_split");
    for (const Case& c : cases) {
      pc_paged_attention_args a = decode_args();
      c.change(a);
      const pc_status st = v->can_implement(h200(), &a, &msg);
      if (std::string(c.expected) == "shared memory" && v->name == "v2_split") {
        EXPECT_EQ(st, PC_STATUS_OK) << msg;  // v2_split splits long contexts
        continue;
      }
      EXPECT_EQ(st, c.status) << c.expected << ": " << msg;
      EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    }
  }
}

TEST_F(Builtins, CopiesRefuseDequantizeAndForeignCaches) {
  pc_gather_args g{};
  g.struct_size = sizeof g;
  g.dtype = PC_DTYPE_BFLOAT16;
  g.num_tokens = 10;
  g.key_cache = aligned(1);
  g.value_cache = aligned(2);
  g.cache = decode_args().cache;
  g.cache.dtype = PC_DTYPE_BFLOAT16;
  g.slot_mapping = static_cast<const int64_t*>(aligned(3));
  g.key_out = const_cast<void*>(aligned(4));
  g.key_stride_token = 2 * 128;
  g.key_stride_head = 128;
  g.value_out = const_cast<void*>(aligned(5));
  g.value_stride_token = 2 * 128;
  g.value_stride_head = 128;
  for (const VariantInfo* v : registry.family(PC_FAMILY_GATHER_CACHED_KV)) {
    SCOPED_TRACE(v->name);
    std::string msg;
    EXPECT_EQ(v->can_implement(h200(), &g, &msg), PC_STATUS_OK) << msg;
    pc_gather_args d = g;
    d.dequantize = 1;
    EXPECT_EQ(v->can_implement(h200(), &d, &msg), PC_STATUS_UNSUPPORTED);
    EXPECT_NE(msg.find("dequantize"), std::string::npos) << msg;
    d = g;
    d.cache.kind = PC_CACHE_HND;
    EXPECT_EQ(v->can_implement(h200(), &d, &msg), PC_STATUS_UNSUPPORTED);
    EXPECT_NE(msg.find("only x-split"), std::string::npos) << msg;
  }
  pc_reshape_and_cache_args r{};
  r.struct_size = sizeof r;
  r.dtype = g.dtype;
  r.num_tokens = g.num_tokens;
  r.key = g.key_out;
  r.key_stride_token = g.key_stride_token;
  r.key_stride_head = g.key_stride_head;
  r.value = g.value_out;
  r.value_stride_token = g.value_stride_token;
  r.value_stride_head = g.value_stride_head;
  r.key_cache = const_cast<void*>(g.key_cache);
  r.value_cache = const_cast<void*>(g.value_cache);
  r.cache = g.cache;
  r.slot_mapping = g.slot_mapping;
  for (const VariantInfo* v : registry.family(PC_FAMILY_RESHAPE_AND_CACHE)) {
    SCOPED_TRACE(v->name);
    std::string msg;
    EXPECT_EQ(v->can_implement(h200(), &r, &msg), PC_STATUS_OK) << msg;
    pc_reshape_and_cache_args d = r;
    d.cache.combined = 1;
    EXPECT_EQ(v->can_implement(h200(), &d, &msg), PC_STATUS_UNSUPPORTED);
    EXPECT_NE(msg.find("combined"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace pagecheck
