// v1_baseline, v1_shared_q and v2_split: their version-2 declarations (features, multi-token
// queries, context-0 rows, block sizes 8-256, v1's head size 512), the calls their
// can_implement accepts and refuses, and v2_split's workspace over a window (CPU only: nothing
// here touches a device). Skipped in builds without the CUDA kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention/attention_params.h"
#include "attention/attention_rows.h"
#include "declaration_test_support.h"
#include "pagecheck/registry.h"

namespace pagecheck {
namespace {

using declaration_test::aligned;
using declaration_test::h200;

/// A packed x-split float16 cache of 2 kv heads, head size `head`, block size `block`.
void x_split_float16(pc_kv_cache& c, int64_t head, int64_t block) {
  c.kind = PC_CACHE_X_SPLIT;
  c.dtype = PC_DTYPE_FLOAT16;
  c.head_size = head;
  c.block_size = block;
  c.key = {2 * head * block, head * block, 8, block * 8, 1, 8};
  c.value = {2 * head * block, head * block, 1, 0, block, head};
}

/// A valid call: float16, 8 / 2 heads, head 128, block 16, 3 sequences of up to 4 new tokens
/// (query_start), sinks, a window of 64, a soft-cap, ALiBi, causal.
pc_paged_attention_args feature_args() {
  pc_paged_attention_args a = declaration_test::attention_skeleton(8, 0.125f);
  declaration_test::packed_x_split_float16(a.cache);
  declaration_test::three_sequences_with_features(a);
  a.features.alibi_slopes = static_cast<const float*>(aligned(11));
  return a;
}

/// `v.can_implement` of feature_args() after `change`; `msg` receives the variant's message.
pc_status implement_changed(const VariantInfo& v, void (*change)(pc_paged_attention_args&),
                            std::string& msg) {
  pc_paged_attention_args a = feature_args();
  change(a);
  return v.can_implement(h200(), &a, &msg);
}

class SplitAndBaseline : public declaration_test::BuiltinRegistryTest {
 protected:
  void SetUp() override {
    BuiltinRegistryTest::SetUp();
    if (IsSkipped()) return;
    for (const char* name : {"v1_baseline", "v1_shared_q", "v2_split"}) {
      const VariantInfo* v = registry.find(PC_FAMILY_PAGED_ATTENTION, name);
      ASSERT_NE(v, nullptr) << name << " is not registered";
      variants.push_back(v);
    }
  }
  std::vector<const VariantInfo*> variants;  ///< v1_baseline, v1_shared_q, v2_split
};

TEST_F(SplitAndBaseline, DeclareFeaturesMultiTokenQueriesAndTheirShapes) {
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE(v->name);
    const bool split = v->name == "v2_split";
    EXPECT_EQ(v->abi_version, 2);
    EXPECT_TRUE(v->has_caps(PC_CAP_ALIBI | PC_CAP_SINKS | PC_CAP_WINDOW | PC_CAP_SOFT_CAP |
                            PC_CAP_NON_CAUSAL | PC_CAP_LARGE_CACHE | PC_CAP_TOKEN_STRIDE |
                            PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD |
                            PC_CAP_CACHE_PAD_SHARED));
    EXPECT_FALSE(v->has_caps(PC_CAP_COMBINED_KV));
    EXPECT_FALSE(v->has_caps(PC_CAP_FULL_RANGE));
    EXPECT_EQ(v->max_query_len(), kernels::kMaxQueryLen);
    EXPECT_EQ(v->variant.context0, PC_CONTEXT0_ZEROS);
    EXPECT_TRUE(v->supports_cache_kind(PC_CACHE_X_SPLIT));
    EXPECT_FALSE(v->supports_cache_kind(PC_CACHE_NHD));
    EXPECT_FALSE(v->supports_kv_dtype(PC_DTYPE_FLOAT16, PC_DTYPE_FP8_E4M3));
    EXPECT_EQ(v->block_sizes, (std::vector<int32_t>{8, 16, 32, 64, 128, 256}));
    const bool has512 =
        std::find(v->head_sizes.begin(), v->head_sizes.end(), 512) != v->head_sizes.end();
    EXPECT_EQ(has512, !split);
    for (int32_t hs : {64, 80, 96, 112, 128, 192, 256}) {
      EXPECT_TRUE(v->supports(PC_DTYPE_BFLOAT16, hs, 128)) << hs;
    }
    const std::vector<int32_t> parts(kernels::kPartitionSizes.begin(),
                                     kernels::kPartitionSizes.end());
    EXPECT_EQ(v->partition_sizes, split ? parts : std::vector<int32_t>{});
  }
}

TEST_F(SplitAndBaseline, AcceptTheCallsTheyDeclare) {
  struct Case {
    const char* what;
    void (*change)(pc_paged_attention_args&);
    bool v1_only;  ///< v2_split refuses it
  };
  const Case cases[] = {
      {"the base call", [](pc_paged_attention_args&) {}, false},
      {"16 new tokens, non-causal",
       [](pc_paged_attention_args& a) {
         a.batch.max_query_len = 16;
         a.features.causal = 0;
       },
       false},
      {"context-0 rows only", [](pc_paged_attention_args& a) { a.batch.max_context_len = 0; },
       false},
      {"block size 64", [](pc_paged_attention_args& a) { x_split_float16(a.cache, 128, 64); },
       false},
      {"block size 128", [](pc_paged_attention_args& a) { x_split_float16(a.cache, 128, 128); },
       false},
      {"block size 256",
       [](pc_paged_attention_args& a) {
         x_split_float16(a.cache, 128, 256);
         a.batch.max_blocks_per_seq = a.batch.block_table_stride = 1;
       },
       false},
      {"head size 512, block 32",
       [](pc_paged_attention_args& a) {
         x_split_float16(a.cache, 512, 32);
         a.query_stride_token = a.out_stride_token = 8 * 512;
         a.query_stride_head = a.out_stride_head = 512;
       },
       true},
      {"a window over a context v1's shared memory could not hold",
       [](pc_paged_attention_args& a) {
         a.batch.max_blocks_per_seq = a.batch.block_table_stride = 8192;
         a.batch.max_context_len = 100000;
         a.features.window = 1000;
       },
       false},
  };
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE(v->name);
    for (const Case& c : cases) {
      const pc_status expected =
          c.v1_only && v->name == "v2_split" ? PC_STATUS_UNSUPPORTED : PC_STATUS_OK;
      std::string msg;
      EXPECT_EQ(implement_changed(*v, c.change, msg), expected) << c.what << ": " << msg;
    }
  }
  // Head size 512 is v1's alone.
  pc_paged_attention_args a = feature_args();
  x_split_float16(a.cache, 512, 32);
  a.query_stride_token = a.out_stride_token = 8 * 512;
  a.query_stride_head = a.out_stride_head = 512;
  std::string msg;
  EXPECT_EQ(variants[2]->can_implement(h200(), &a, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("unsupported head_size: 512"), std::string::npos) << msg;
  EXPECT_EQ(variants[0]->can_implement(h200(), &a, &msg), PC_STATUS_OK) << msg;
}

TEST_F(SplitAndBaseline, RefuseWhatTheKernelsCannotDo) {
  const declaration_test::AttentionRefusal cases[] = {
      {PC_STATUS_UNSUPPORTED, "max_query_len (17) exceeds 16",
       [](pc_paged_attention_args& a) { a.batch.max_query_len = 17; }},
      {PC_STATUS_INVALID_ARGUMENT, "features.window",
       [](pc_paged_attention_args& a) { a.features.window = -1; }},
      {PC_STATUS_INVALID_ARGUMENT, "features.soft_cap",
       [](pc_paged_attention_args& a) { a.features.soft_cap = -1.f; }},
      {PC_STATUS_INVALID_ARGUMENT, "num_query_tokens",
       [](pc_paged_attention_args& a) { a.batch.query_start = nullptr; }},
      {PC_STATUS_UNSUPPORTED, "unsupported block_size: 48",
       [](pc_paged_attention_args& a) { x_split_float16(a.cache, 128, 48); }},
      {PC_STATUS_UNSUPPORTED, "unsupported block_size: 512",
       [](pc_paged_attention_args& a) {
         x_split_float16(a.cache, 128, 512);
         a.batch.max_blocks_per_seq = a.batch.block_table_stride = 1;
       }},
      {PC_STATUS_UNSUPPORTED, "unsupported block_size: 4",
       [](pc_paged_attention_args& a) { x_split_float16(a.cache, 128, 4); }},
      {PC_STATUS_UNSUPPORTED, "unsupported head_size: 72",
       [](pc_paged_attention_args& a) { x_split_float16(a.cache, 72, 16); }},
      {PC_STATUS_UNSUPPORTED, "only x-split",
       [](pc_paged_attention_args& a) { a.cache.kind = PC_CACHE_NHD; }},
      // Two problems: the invalid argument is named before what the kernels cannot do.
      {PC_STATUS_INVALID_ARGUMENT, "features.window",
       [](pc_paged_attention_args& a) {
         a.features.window = -1;
         a.batch.max_query_len = 17;
       }},
      {PC_STATUS_INVALID_ARGUMENT, "scale is not finite",
       [](pc_paged_attention_args& a) {
         a.scale = std::numeric_limits<float>::quiet_NaN();
         a.batch.num_seqs = 70000;
       }},
  };
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE(v->name);
    for (const auto& c : cases) {
      std::string msg;
      EXPECT_EQ(implement_changed(*v, c.change, msg), c.status) << c.expected << ": " << msg;
      EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    }
  }
}

TEST_F(SplitAndBaseline, SplitWorkspaceIsSizedOverTheWindow) {
  const VariantInfo* split = variants[2];
  pc_paged_attention_args a = feature_args();
  a.batch.max_blocks_per_seq = a.batch.block_table_stride = 8192;
  a.batch.max_context_len = 100000;
  const auto align = [](int64_t b) { return (b + 255) / 256 * 256; };
  const auto expected = [&](int64_t parts) {
    const int64_t entries = a.batch.num_query_tokens * a.num_heads * parts;
    return 2 * align(entries * 4) + align(entries * 128 * 4);
  };
  ASSERT_EQ(a.batch.num_query_tokens * a.num_heads, 72);
  // 1000 + 3 other new tokens + 31 of tile rounding = 1034 tokens: 9 partitions of 128 (a grid
  // of 648 blocks, within kSmallPartitionGridLimit), not 5 of 256.
  a.features.window = 1000;
  EXPECT_EQ(static_cast<int64_t>(split->workspace_bytes(h200(), &a)), expected(9));
  // The whole context: 782 partitions of 128 would make 56304 blocks, so 391 of 256.
  a.features.window = 0;
  EXPECT_EQ(static_cast<int64_t>(split->workspace_bytes(h200(), &a)), expected(391));
  a.features.window = 200000;  // a window covering every context masks nothing
  EXPECT_EQ(static_cast<int64_t>(split->workspace_bytes(h200(), &a)), expected(391));
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(variants[static_cast<size_t>(i)]->workspace_bytes(h200(), &a), 0u);
}

}  // namespace
}  // namespace pagecheck
