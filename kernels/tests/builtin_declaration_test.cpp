// The built-in variants' version-2 declarations and the host-side refusals of their
// can_implement (CPU only: can_implement never touches the device when the pc_device_info
// carries the shared-memory limit). Skipped in builds without the CUDA kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention_params.h"
#include "declaration_test_support.h"
#include "pagecheck/registry.h"

namespace pagecheck {
namespace {

using declaration_test::aligned;
using declaration_test::h200;

/// A valid float16 decode call: 4 sequences, 8/2 heads, head 128, block 16, packed x-split.
pc_paged_attention_args decode_args() {
  pc_paged_attention_args a = declaration_test::attention_skeleton(8, 0.125f);
  declaration_test::packed_x_split_float16(a.cache);
  a.batch.num_seqs = 4;
  a.batch.num_query_tokens = 4;
  a.batch.max_query_len = 1;
  return a;
}

using Builtins = declaration_test::BuiltinRegistryTest;

TEST_F(Builtins, DeclareTheDecodeSubsetTheyImplement) {
  ASSERT_EQ(registry.variants().size(), 8u);
  for (const auto& v : registry.variants()) {
    SCOPED_TRACE(v->name);
    // Attention variants have their own: attention_declaration_test.cpp (v1, v2_split) and
    // gqa_declaration_test.cpp (v3_gqa).
    if (v->variant.family == PC_FAMILY_PAGED_ATTENTION) continue;
    EXPECT_EQ(v->abi_version, 2);
    EXPECT_EQ(v->origin, "builtin");
    const bool copy = v->variant.family != PC_FAMILY_PAGED_ATTENTION;
    EXPECT_TRUE(v->supports_cache_kind(PC_CACHE_X_SPLIT));
    EXPECT_EQ(v->supports_cache_kind(PC_CACHE_NHD), copy);
    EXPECT_EQ(v->supports_cache_kind(PC_CACHE_HND), copy);
    EXPECT_TRUE(v->supports_kv_dtype(PC_DTYPE_BFLOAT16, PC_DTYPE_BFLOAT16));
    EXPECT_EQ(v->supports_kv_dtype(PC_DTYPE_FLOAT16, PC_DTYPE_FP8_E4M3), copy);
    EXPECT_EQ(v->supports_kv_dtype(PC_DTYPE_FLOAT32, PC_DTYPE_FP8_E5M2), copy);
    // Raw gathers of fp8 codes are declared (issue 15); reshapes and attention take no fp8 tokens.
    const bool gather = v->variant.family == PC_FAMILY_GATHER_CACHED_KV;
    EXPECT_EQ(v->supports(PC_DTYPE_FP8_E4M3, 128, 16), gather);
    EXPECT_EQ(v->supports(PC_DTYPE_FP8_E5M2, 128, 16), gather);
    EXPECT_TRUE(v->supports_scale_kind(PC_SCALE_NONE));
    EXPECT_EQ(v->supports_scale_kind(PC_SCALE_PER_TENSOR), copy);
    EXPECT_EQ(v->supports_scale_kind(PC_SCALE_PER_KV_HEAD), copy);
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
    EXPECT_EQ(v->has_caps(PC_CAP_COMBINED_KV | PC_CAP_FULL_RANGE), copy);
    EXPECT_EQ(v->has_caps(PC_CAP_DEQUANTIZE), v->variant.family == PC_FAMILY_GATHER_CACHED_KV);
    for (uint64_t cap : {PC_CAP_SINKS, PC_CAP_WINDOW, PC_CAP_SOFT_CAP, PC_CAP_NON_CAUSAL}) {
      EXPECT_FALSE(v->has_caps(cap)) << cap;
    }
    const std::vector<int32_t> declared(kernels::kPartitionSizes.begin(),
                                        kernels::kPartitionSizes.end());
    EXPECT_EQ(v->partition_sizes, v->name == "v2_split" ? declared : std::vector<int32_t>{});
  }
}

TEST_F(Builtins, AttentionRefusesWhatTheKernelsCannotDo) {
  const declaration_test::AttentionRefusal cases[] = {
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
      // (Multi-token queries and the features: attention_declaration_test.cpp.)
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
    if (v->name == "v3_gqa") continue;  // its refusals: gqa_declaration_test.cpp
    std::string msg;
    const pc_paged_attention_args valid = decode_args();
    ASSERT_EQ(v->can_implement(h200(), &valid, &msg), PC_STATUS_OK) << msg;
    EXPECT_EQ(v->workspace_bytes(h200(), &valid) > 0, v->name == "v2_split");
    for (const auto& c : cases) {
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

/// A valid bfloat16 gather of 10 tokens from the packed x-split cache of decode_args().
pc_gather_args gather_args() {
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
  return g;
}

/// The reshape_and_cache call over the same tensors.
pc_reshape_and_cache_args reshape_of(const pc_gather_args& g) {
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
  return r;
}

/// Packed NHD ([S, H, D] pages) or HND ([H, S, D]) strides of the 2-head, head-128, block-16
/// cache, for K and V.
void page_layout(pc_kv_cache& c, pc_cache_kind kind) {
  const int64_t S = 16, H = 2, D = 128;
  c.kind = kind;
  c.key = kind == PC_CACHE_NHD ? pc_cache_strides{S * H * D, D, H * D, 0, 1, D}
                               : pc_cache_strides{H * S * D, S * D, D, 0, 1, D};
  c.value = c.key;
}

/// A packed fp8 cache of `kind` (page_layout) and `dtype` with scales of `scale_kind` (the
/// k_scale and v_scale pointers set whatever the kind); dequantizing when gathering.
void fp8_cache(pc_gather_args& g, pc_cache_kind kind, pc_dtype dtype,
               pc_scale_kind scale_kind = PC_SCALE_PER_KV_HEAD) {
  page_layout(g.cache, kind);
  g.cache.dtype = dtype;
  g.cache.scale_kind = scale_kind;
  g.cache.k_scale = static_cast<const float*>(aligned(7));
  g.cache.v_scale = static_cast<const float*>(aligned(8));
  g.dequantize = 1;
}

struct CopyCase {
  const char* name;
  void (*change)(pc_gather_args&);
  pc_status gather;      ///< expected gather status
  pc_status reshape;     ///< expected reshape status
  const char* expected;  ///< in the message of a refusal
  bool vectorized_only;  ///< the scalar variants accept it
};

const CopyCase kCopyCases[] = {
    {"x-split", [](pc_gather_args&) {}, PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"nhd", [](pc_gather_args& g) { page_layout(g.cache, PC_CACHE_NHD); }, PC_STATUS_OK,
     PC_STATUS_OK, "", false},
    {"hnd", [](pc_gather_args& g) { page_layout(g.cache, PC_CACHE_HND); }, PC_STATUS_OK,
     PC_STATUS_OK, "", false},
    {"combined nhd",
     [](pc_gather_args& g) {
       page_layout(g.cache, PC_CACHE_NHD);
       g.cache.combined = 1;
       g.cache.value_base = 16 * 2 * 128;
       g.cache.key.block = g.cache.value.block = 2 * g.cache.value_base;
       g.value_cache = static_cast<const char*>(g.key_cache) + 2 * g.cache.value_base;
     },
     PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"padded nhd (scalar cache accesses)",
     [](pc_gather_args& g) {
       page_layout(g.cache, PC_CACHE_NHD);
       g.cache.key.slot += 3;
       g.cache.key.block = 16 * g.cache.key.slot + 5;
     },
     PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"fp8 e4m3 nhd, float16 tokens",
     [](pc_gather_args& g) {
       g.dtype = PC_DTYPE_FLOAT16;
       fp8_cache(g, PC_CACHE_NHD, PC_DTYPE_FP8_E4M3);
     },
     PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"fp8 e5m2 per tensor, float32 tokens",
     [](pc_gather_args& g) {
       g.dtype = PC_DTYPE_FLOAT32;
       g.key_stride_token = g.value_stride_token = 2 * 128;
       fp8_cache(g, PC_CACHE_HND, PC_DTYPE_FP8_E5M2, PC_SCALE_PER_TENSOR);
     },
     PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"raw fp8 codes",
     [](pc_gather_args& g) {
       fp8_cache(g, PC_CACHE_NHD, PC_DTYPE_FP8_E4M3);
       g.dtype = PC_DTYPE_FP8_E4M3;
       g.dequantize = 0;
     },
     PC_STATUS_OK, PC_STATUS_OK, "", false},
    {"dequantize a bfloat16 cache", [](pc_gather_args& g) { g.dequantize = 1; },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_OK, "dequantize", false},
    {"fp8 without dequantize",
     [](pc_gather_args& g) {
       fp8_cache(g, PC_CACHE_NHD, PC_DTYPE_FP8_E4M3);
       g.dequantize = 0;
     },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_OK, "raw gather", false},
    {"fp8 without scales",
     [](pc_gather_args& g) { fp8_cache(g, PC_CACHE_NHD, PC_DTYPE_FP8_E5M2, PC_SCALE_NONE); },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_INVALID_ARGUMENT, "scale_kind", false},
    {"fp8 k_scale NULL",
     [](pc_gather_args& g) {
       fp8_cache(g, PC_CACHE_NHD, PC_DTYPE_FP8_E4M3);
       g.cache.k_scale = nullptr;
     },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_INVALID_ARGUMENT, "cache.k_scale", false},
    {"mixed 16-bit dtypes", [](pc_gather_args& g) { g.dtype = PC_DTYPE_FLOAT16; },
     PC_STATUS_UNSUPPORTED, PC_STATUS_UNSUPPORTED, "mixed-dtype", false},
    {"scales on a bfloat16 cache",
     [](pc_gather_args& g) { g.cache.scale_kind = PC_SCALE_PER_TENSOR; },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_INVALID_ARGUMENT, "only fp8 caches", false},
    {"combined with a foreign value pointer",
     [](pc_gather_args& g) {
       g.cache.combined = 1;
       g.cache.value_base = 2 * 128 * 16;
     },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_INVALID_ARGUMENT, "value_base", false},
    {"dim_split not dividing head_size", [](pc_gather_args& g) { g.cache.key.dim_split = 3; },
     PC_STATUS_INVALID_ARGUMENT, PC_STATUS_INVALID_ARGUMENT, "cache.key.dim_split", false},
    {"unknown kind", [](pc_gather_args& g) { g.cache.kind = static_cast<pc_cache_kind>(7); },
     PC_STATUS_UNSUPPORTED, PC_STATUS_UNSUPPORTED, "unknown page layout", false},
    {"head size not compiled", [](pc_gather_args& g) { g.cache.head_size = 120; },
     PC_STATUS_UNSUPPORTED, PC_STATUS_UNSUPPORTED, "head_size", false},
    {"unaligned token rows",
     [](pc_gather_args& g) { g.key_out = static_cast<char*>(g.key_out) + 2; },
     PC_STATUS_UNSUPPORTED, PC_STATUS_UNSUPPORTED, "16-byte", true},
    {"token stride not a multiple of x",
     [](pc_gather_args& g) { g.value_stride_token = 2 * 128 + 1; }, PC_STATUS_UNSUPPORTED,
     PC_STATUS_UNSUPPORTED, "value_stride_token", true},
};

TEST_F(Builtins, CopiesTakeEveryLayoutAndFp8AndRefuseTheRest) {
  for (const CopyCase& c : kCopyCases) {
    SCOPED_TRACE(c.name);
    pc_gather_args g = gather_args();
    c.change(g);
    const pc_reshape_and_cache_args r = reshape_of(g);
    for (pc_family family : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
      const bool gather = family == PC_FAMILY_GATHER_CACHED_KV;
      for (const VariantInfo* v : registry.family(family)) {
        SCOPED_TRACE(v->name);
        std::string msg;
        const bool scalar = v->name == "naive" || v->name == "scalar";
        const pc_status expected = scalar && c.vectorized_only ? PC_STATUS_OK
                                   : gather                    ? c.gather
                                                               : c.reshape;
        const pc_status st =
            gather ? v->can_implement(h200(), &g, &msg) : v->can_implement(h200(), &r, &msg);
        EXPECT_EQ(st, expected) << msg;
        if (expected != PC_STATUS_OK) EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
      }
    }
  }
}

}  // namespace
}  // namespace pagecheck
