// v3_gqa's version-2 declaration, its can_implement refusals, its workspace, its partition-size
// policy and its loader-mode choice (CPU only: nothing here touches a device, since the
// pc_device_info carries the shared-memory limit and the SM count). Skipped without CUDA kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attention/attention_host.h"
#include "attention/attention_params.h"
#include "attention_gqa/gqa_host.h"
#include "attention_gqa/gqa_params.h"
#include "common/kernel_lists.h"
#include "declaration_test_support.h"
#include "pagecheck/registry.h"

namespace pagecheck {
namespace {

using declaration_test::aligned;
using declaration_test::h200;

/// A valid call: float16 queries, 16 / 2 heads (group 8), head 128, block 16, an NHD cache of
/// fp8 e4m3 codes with per-kv-head scales, 3 sequences of up to 4 new tokens, sinks, a window.
pc_paged_attention_args gqa_args() {
  pc_paged_attention_args a = declaration_test::attention_skeleton(16, 0.088f);
  pc_kv_cache& c = a.cache;
  c.kind = PC_CACHE_NHD;
  c.dtype = PC_DTYPE_FP8_E4M3;
  c.scale_kind = PC_SCALE_PER_KV_HEAD;
  c.key = {16 * 2 * 128, 128, 2 * 128, 0, 1, 128};
  c.value = c.key;
  c.k_scale = static_cast<const float*>(aligned(7));
  c.v_scale = static_cast<const float*>(aligned(8));
  declaration_test::three_sequences_with_features(a);
  return a;
}

class Gqa : public declaration_test::BuiltinRegistryTest {
 protected:
  void SetUp() override {
    BuiltinRegistryTest::SetUp();
    if (IsSkipped()) return;
    for (const VariantInfo* v : registry.family(PC_FAMILY_PAGED_ATTENTION)) {
      if (v->name == "v3_gqa") gqa = v;
    }
    ASSERT_NE(gqa, nullptr) << "v3_gqa is not registered";
  }
  const VariantInfo* gqa = nullptr;
};

TEST_F(Gqa, DeclaresLayoutsFp8FeaturesAndMultiTokenQueries) {
  const VariantInfo& v = *gqa;
  EXPECT_EQ(v.abi_version, 2);
  EXPECT_EQ(v.origin, "builtin");
  for (pc_cache_kind k : {PC_CACHE_X_SPLIT, PC_CACHE_NHD, PC_CACHE_HND}) {
    EXPECT_TRUE(v.supports_cache_kind(k)) << k;
  }
  for (pc_dtype q : {PC_DTYPE_FLOAT32, PC_DTYPE_FLOAT16, PC_DTYPE_BFLOAT16}) {
    EXPECT_TRUE(v.supports_kv_dtype(q, q)) << q;
    EXPECT_TRUE(v.supports_kv_dtype(q, PC_DTYPE_FP8_E4M3)) << q;
    EXPECT_TRUE(v.supports_kv_dtype(q, PC_DTYPE_FP8_E5M2)) << q;
  }
  for (pc_scale_kind s : {PC_SCALE_NONE, PC_SCALE_PER_TENSOR, PC_SCALE_PER_KV_HEAD}) {
    EXPECT_TRUE(v.supports_scale_kind(s)) << s;
  }
  EXPECT_EQ(v.max_query_len(), kernels::kGqaMaxQueryLen);
  EXPECT_EQ(v.variant.context0, PC_CONTEXT0_ZEROS);
  EXPECT_EQ(v.variant.precision.struct_size, sizeof(pc_precision));
  EXPECT_EQ(v.variant.precision.qk_accum, PC_ACCUM_FLOAT32);
  EXPECT_EQ(v.variant.precision.pv_accum, PC_ACCUM_FLOAT32);
  // The tensor-core path rounds the softmax weights to the query dtype before P.V.
  EXPECT_EQ(v.variant.precision.rounded, static_cast<uint32_t>(PC_ROUND_WEIGHTS));
  EXPECT_EQ(v.variant.precision.storage_sum_terms, 0);
  EXPECT_FALSE(v.nondeterministic());
  const uint64_t caps = PC_CAP_ALIBI | PC_CAP_LARGE_CACHE | PC_CAP_TOKEN_STRIDE |
                        PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD_SHARED |
                        PC_CAP_CACHE_PAD | PC_CAP_COMBINED_KV | PC_CAP_SINKS | PC_CAP_WINDOW |
                        PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL;
  EXPECT_EQ(v.variant.caps, caps);
  // Its own kernels' sizes and, for the small groups it runs on v2_split's kernels, those.
  std::vector<int32_t> parts(kernels::kGqaPartitionSizes.begin(),
                             kernels::kGqaPartitionSizes.end());
  parts.insert(parts.end(), kernels::kPartitionSizes.begin(), kernels::kPartitionSizes.end());
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  EXPECT_EQ(v.partition_sizes, parts);
  for (int32_t bs : {1, 8, 16, 32, 64, 128, 256}) {
    EXPECT_NE(std::find(v.block_sizes.begin(), v.block_sizes.end(), bs), v.block_sizes.end())
        << "block size " << bs;
  }
  for (int32_t hs : {64, 128, 256}) {
    EXPECT_TRUE(v.supports(PC_DTYPE_FLOAT16, hs, 16)) << "head size " << hs;
  }
}

TEST_F(Gqa, AcceptsTheCallsItImplements) {
  struct Case {
    const char* what;
    void (*change)(pc_paged_attention_args&);
  };
  const Case cases[] = {
      {"the base call", [](pc_paged_attention_args&) {}},
      {"x-split float16, decode, no features",
       [](pc_paged_attention_args& a) {
         declaration_test::packed_x_split_float16(a.cache);
         a.cache.scale_kind = PC_SCALE_NONE;
         a.cache.k_scale = a.cache.v_scale = nullptr;
         a.batch.query_start = nullptr;
         a.batch.num_query_tokens = 3;
         a.batch.max_query_len = 1;
         a.features =
             pc_attention_features{sizeof(pc_attention_features), nullptr, nullptr, 0, 0.f, 1};
       }},
      {"HND bfloat16 queries, e5m2 per tensor, combined",
       [](pc_paged_attention_args& a) {
         a.dtype = PC_DTYPE_BFLOAT16;
         a.cache.kind = PC_CACHE_HND;
         a.cache.dtype = PC_DTYPE_FP8_E5M2;
         a.cache.scale_kind = PC_SCALE_PER_TENSOR;
         a.cache.combined = 1;
         a.cache.value_base = 2 * 16 * 128;
       }},
      {"float32 queries on an fp8 cache",
       [](pc_paged_attention_args& a) { a.dtype = PC_DTYPE_FLOAT32; }},
      {"16 new tokens, non-causal",
       [](pc_paged_attention_args& a) {
         a.batch.max_query_len = 16;
         a.features.causal = 0;
       }},
      {"block size 256",
       [](pc_paged_attention_args& a) {
         a.cache.block_size = 256;
         a.batch.max_blocks_per_seq = a.batch.block_table_stride = 1;
       }},
      {"MQA, 64 query heads",
       [](pc_paged_attention_args& a) {
         a.num_heads = 64;
         a.cache.num_kv_heads = 1;
       }},
      {"a padded, misaligned stride (element-by-element loads)",
       [](pc_paged_attention_args& a) { a.cache.key.slot = 2 * 128 + 3; }},
      {"all contexts 0", [](pc_paged_attention_args& a) { a.batch.max_context_len = 0; }},
  };
  for (const Case& c : cases) {
    pc_paged_attention_args a = gqa_args();
    c.change(a);
    std::string msg;
    EXPECT_EQ(gqa->can_implement(h200(), &a, &msg), PC_STATUS_OK) << c.what << ": " << msg;
  }
}

TEST_F(Gqa, RefusesWhatTheKernelCannotDo) {
  const declaration_test::AttentionRefusal cases[] = {
      {PC_STATUS_UNSUPPORTED, "unsupported head_size: 72",
       [](pc_paged_attention_args& a) {
         a.cache.head_size = 72;
         a.cache.key.dim_split = a.cache.value.dim_split = 72;
       }},
      {PC_STATUS_UNSUPPORTED, "unsupported dtype: fp8_e4m3",
       [](pc_paged_attention_args& a) { a.dtype = PC_DTYPE_FP8_E4M3; }},
      {PC_STATUS_UNSUPPORTED, "cache.dtype bfloat16 with float16",
       [](pc_paged_attention_args& a) {
         a.cache.dtype = PC_DTYPE_BFLOAT16;
         a.cache.scale_kind = PC_SCALE_NONE;
       }},
      {PC_STATUS_UNSUPPORTED, "scales only with fp8",
       [](pc_paged_attention_args& a) { a.cache.dtype = PC_DTYPE_FLOAT16; }},
      {PC_STATUS_INVALID_ARGUMENT, "k_scale",
       [](pc_paged_attention_args& a) { a.cache.k_scale = nullptr; }},
      {PC_STATUS_UNSUPPORTED, "max_query_len (17) exceeds 16",
       [](pc_paged_attention_args& a) { a.batch.max_query_len = 17; }},
      {PC_STATUS_INVALID_ARGUMENT, "not a multiple of cache.num_kv_heads",
       [](pc_paged_attention_args& a) { a.num_heads = 15; }},
      {PC_STATUS_INVALID_ARGUMENT, "num_query_tokens",
       [](pc_paged_attention_args& a) { a.batch.query_start = nullptr; }},
      {PC_STATUS_INVALID_ARGUMENT, "exceeds max_blocks_per_seq * block_size",
       [](pc_paged_attention_args& a) { a.batch.max_context_len = 257; }},
      {PC_STATUS_INVALID_ARGUMENT, "features.window",
       [](pc_paged_attention_args& a) { a.features.window = -1; }},
      {PC_STATUS_INVALID_ARGUMENT, "args.features.struct_size",
       [](pc_paged_attention_args& a) { a.features.struct_size = 0; }},
      {PC_STATUS_INVALID_ARGUMENT, "value_cache is NULL",
       [](pc_paged_attention_args& a) { a.value_cache = nullptr; }},
      {PC_STATUS_UNSUPPORTED, "65535 (grid y)",
       [](pc_paged_attention_args& a) { a.batch.num_seqs = 70000; }},
      // Two problems: the invalid argument is named before what the kernels cannot do.
      {PC_STATUS_INVALID_ARGUMENT, "not a multiple of cache.num_kv_heads",
       [](pc_paged_attention_args& a) {
         a.num_heads = 15;
         a.batch.max_query_len = 17;
       }},
      {PC_STATUS_INVALID_ARGUMENT, "scale is not finite",
       [](pc_paged_attention_args& a) {
         a.scale = std::numeric_limits<float>::quiet_NaN();
         a.batch.num_seqs = 70000;
       }},
  };
  for (const auto& c : cases) {
    pc_paged_attention_args a = gqa_args();
    c.change(a);
    std::string msg;
    EXPECT_EQ(gqa->can_implement(h200(), &a, &msg), c.status) << c.expected << ": " << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
  pc_device_info small = h200();
  small.max_shared_per_block = 16 * 1024;
  const pc_paged_attention_args a = gqa_args();
  std::string msg;
  EXPECT_EQ(gqa->can_implement(small, &a, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("shared memory"), std::string::npos) << msg;
}

TEST_F(Gqa, WorkspaceHoldsEveryPartitionOfEveryRow) {
  const pc_device_info device = h200();
  pc_paged_attention_args a = gqa_args();
  a.features.window = 0;
  a.batch.max_blocks_per_seq = a.batch.block_table_stride = 1024;
  a.batch.max_context_len = 16384;
  const auto align = [](int64_t b) { return (b + 255) / 256 * 256; };
  const auto workspace_for = [&](int32_t size) {
    const int64_t entries = a.batch.num_query_tokens * a.num_heads * (16384 / size);
    return 2 * align(entries * 4) + align(entries * 128 * 4);
  };
  // fp16 queries on the fp8 NHD cache run on tensor cores, two 8-row tiles a block (32 rows a
  // sequence and kv head: gqa_tc_rows_per_block): 3 sequences x 2 kv heads x 2 row chunks
  // (group 8 x 4 tokens) = 12 blocks per partition. That kernel keeps two blocks on an SM, so
  // the rule aims at 2 x (132 - 132 / 8) = 232 blocks: 512 is the largest size that reaches
  // them (32 x 12 = 384; 1024: 192).
  ASSERT_TRUE(kernels::gqa_uses_tensor_cores(a));
  ASSERT_EQ(
      kernels::gqa_kernel_facts(128, kernels::gqa_launch_shape(&device, a), true).blocks_per_sm, 2);
  ASSERT_EQ(kernels::choose_gqa_partition_size(12, 16384, 16384, 132, 0, 2), 512);
  EXPECT_EQ(static_cast<int64_t>(gqa->workspace_bytes(h200(), &a)), workspace_for(512));
  // float32 queries run on CUDA cores, 8 rows a block: 4 row chunks, 24 blocks, one block an
  // SM aimed at: size 2048.
  pc_paged_attention_args f32 = a;
  f32.dtype = PC_DTYPE_FLOAT32;
  ASSERT_FALSE(kernels::gqa_uses_tensor_cores(f32));
  ASSERT_EQ(
      kernels::gqa_kernel_facts(128, kernels::gqa_launch_shape(&device, f32), true).blocks_per_sm,
      1);
  ASSERT_EQ(kernels::choose_gqa_partition_size(24, 16384, 16384, 132), 2048);
  EXPECT_EQ(static_cast<int64_t>(gqa->workspace_bytes(h200(), &f32)), workspace_for(2048));
  // A batch that fills the device with one partition of at most 16384 tokens needs none.
  a.batch.num_seqs = 512;
  a.batch.num_query_tokens = 512 * 4;
  EXPECT_EQ(gqa->workspace_bytes(h200(), &a), 0u);
}

/// Groups below 4 run on v2_split's kernels where v2_split implements the call (its workspace
/// then), on v3_gqa's own elsewhere (an NHD cache) and for larger groups.
TEST_F(Gqa, SmallGroupsRunOnTheSplitKernelsWhereThoseImplementTheCall) {
  const pc_device_info dev = h200();
  pc_paged_attention_args mha = declaration_test::attention_skeleton(2, 0.088f);  // 2 / 2 heads
  declaration_test::packed_x_split_float16(mha.cache);
  mha.batch.num_seqs = mha.batch.num_query_tokens = 1;
  mha.batch.max_context_len = 4096;
  mha.batch.max_blocks_per_seq = mha.batch.block_table_stride = 256;
  mha.cache.num_blocks = 256;
  const std::string why = [&] {
    std::string msg;
    return gqa->can_implement(h200(), &mha, &msg) == PC_STATUS_OK ? std::string() : msg;
  }();
  ASSERT_EQ(why, "");
  ASSERT_TRUE(kernels::check_attention(kernels::AttentionVariant::kV2Split, &dev, &mha).ok());
  const std::size_t split =
      kernels::attention_workspace_bytes(kernels::AttentionVariant::kV2Split, &mha);
  ASSERT_TRUE(kernels::check_gqa(&dev, mha).ok());
  const std::size_t own = kernels::gqa_workspace_bytes(&dev, mha);
  ASSERT_GT(split, 0u);
  ASSERT_NE(split, own) << "the two plans must differ for this check to mean anything";
  EXPECT_EQ(gqa->workspace_bytes(h200(), &mha), split);

  // An NHD cache: v2_split declares only x-split, so v3_gqa's own kernels run.
  pc_paged_attention_args nhd = mha;
  nhd.cache.kind = PC_CACHE_NHD;
  nhd.cache.key = {16 * 2 * 128, 128, 2 * 128, 0, 1, 128};
  nhd.cache.value = nhd.cache.key;
  ASSERT_FALSE(kernels::check_attention(kernels::AttentionVariant::kV2Split, &dev, &nhd).ok());
  ASSERT_TRUE(kernels::check_gqa(&dev, nhd).ok());
  EXPECT_EQ(gqa->workspace_bytes(h200(), &nhd), kernels::gqa_workspace_bytes(&dev, nhd));

  // Group 4 on the same x-split cache: v3_gqa's own kernels.
  pc_paged_attention_args group4 = declaration_test::attention_skeleton(8, 0.088f);
  group4.cache = mha.cache;
  group4.batch = mha.batch;
  ASSERT_TRUE(kernels::check_attention(kernels::AttentionVariant::kV2Split, &dev, &group4).ok());
  ASSERT_TRUE(kernels::check_gqa(&dev, group4).ok());
  EXPECT_EQ(gqa->workspace_bytes(h200(), &group4), kernels::gqa_workspace_bytes(&dev, group4));
  EXPECT_NE(gqa->workspace_bytes(h200(), &group4),
            kernels::attention_workspace_bytes(kernels::AttentionVariant::kV2Split, &group4));
}

/// `blocks_per_sm` blocks for at least 7/8 of the SMs: 116 of 132, 28 of 32, times 1, 2 or 3;
/// more than one block an SM only where that keeps partitions of kGqaMinKeysForMoreBlocks keys.
TEST(GqaPartitionSize, PicksTheLargestListedSizeThatFillsTheDevice) {
  using kernels::choose_gqa_partition_size;
  using kernels::kGqaMinKeysForMoreBlocks;
  using kernels::kGqaPartitionSizes;
  for (const auto [sms, per_sm_target] : {std::pair<int64_t, int64_t>{132, 116}, {32, 28}}) {
    for (int64_t per_sm : {1, 2, 3}) {
      for (int64_t rows : {1, 3, 8, 64, 116, 264, 1000, 100000}) {
        for (int64_t ctx : {1, 64, 65, 1000, 2048, 4096, 100000, 1 << 24}) {
          const int32_t size = choose_gqa_partition_size(rows, ctx, ctx, sms, 0, per_sm);
          SCOPED_TRACE("sms " + std::to_string(sms) + " blocks an SM " + std::to_string(per_sm) +
                       " rows " + std::to_string(rows) + " ctx " + std::to_string(ctx));
          ASSERT_NE(std::find(kGqaPartitionSizes.begin(), kGqaPartitionSizes.end(), size),
                    kGqaPartitionSizes.end());
          const auto blocks = [&](int64_t s) { return rows * ((ctx + s - 1) / s); };
          // Either the size fills `per_sm` blocks an SM and keeps kGqaMinKeysForMoreBlocks keys,
          // or it is the one-block size, and aiming at more blocks would have cut the
          // partitions below that length.
          const bool more = per_sm > 1 && size >= kGqaMinKeysForMoreBlocks &&
                            blocks(size) >= per_sm_target * per_sm;
          if (per_sm > 1 && !more) {
            EXPECT_EQ(size, choose_gqa_partition_size(rows, ctx, ctx, sms, 0, 1));
            EXPECT_LT(blocks(kGqaMinKeysForMoreBlocks), per_sm_target * per_sm);
          }
          const int64_t target = per_sm_target * (more ? per_sm : 1);
          EXPECT_LE((ctx + size - 1) / size, kernels::kGqaMaxGridZ);
          if (size != kGqaPartitionSizes.front()) EXPECT_GE(blocks(size), target);
          if (size != kGqaPartitionSizes.back()) {
            const int32_t next =
                *(std::find(kGqaPartitionSizes.begin(), kGqaPartitionSizes.end(), size) + 1);
            EXPECT_LT(blocks(next), target) << "a larger size " << next << " would still fill it";
          }
        }
      }
    }
  }
  EXPECT_EQ(choose_gqa_partition_size(1, int64_t{1} << 31, int64_t{1} << 31, 132), 0);
  // The measured shapes (8 kv heads, one row tile, 132 SMs, two blocks resident): batch 1 keeps
  // its one-block partitions (128 keys at 2048, 256 at 4096); batch 8 at 1024 halves 512 to 256.
  EXPECT_EQ(choose_gqa_partition_size(8, 2048, 2048, 132, 128, 2), 128);
  EXPECT_EQ(choose_gqa_partition_size(8, 4096, 4096, 132, 128, 2), 256);
  EXPECT_EQ(choose_gqa_partition_size(64, 1024, 1024, 132, 128, 1), 512);
  EXPECT_EQ(choose_gqa_partition_size(64, 1024, 1024, 132, 128, 2), 256);
}

/// The rule aims at two blocks an SM only where the kernel keeps two resident: the tensor-core
/// kernel at head 128 (one row tile, float16 stages: three resident) and two row tiles of fp8
/// stages (two resident), not head 256 with two row tiles (one resident: 256 threads, 128
/// fragment registers each) nor the CUDA-core kernel (one block an SM aimed at).
TEST(GqaKernelFacts, AimsAtTwoBlocksWhereTheKernelKeepsThemResident) {
  using kernels::GqaLaunchShape;
  using kernels::kGqaTensorCoreRows;
  GqaLaunchShape one_tile;
  one_tile.tensor_cores = true;
  one_tile.rows_per_block = kGqaTensorCoreRows;
  GqaLaunchShape two_tiles = one_tile;
  two_tiles.rows_per_block = 2 * kGqaTensorCoreRows;
  GqaLaunchShape cuda_cores;
  cuda_cores.rows_per_block = 8;
  EXPECT_EQ(kernels::gqa_kernel_facts(128, one_tile, false).blocks_per_sm, 2);
  EXPECT_EQ(kernels::gqa_kernel_facts(128, two_tiles, true).blocks_per_sm, 2);
  EXPECT_EQ(kernels::gqa_kernel_facts(256, two_tiles, false).blocks_per_sm, 1);
  EXPECT_EQ(kernels::gqa_kernel_facts(128, cuda_cores, false).blocks_per_sm, 1);
  // Shared memory per block allows the blocks aimed at (228 KB an SM, 1 KB reserved a block).
  for (int64_t head : kernels::kHeadSizes) {
    if (head % 16 != 0) continue;  // tensor cores take multiples of 16
    for (const GqaLaunchShape& shape : {one_tile, two_tiles}) {
      for (bool fp8 : {false, true}) {
        const kernels::GqaKernelFacts f = kernels::gqa_kernel_facts(head, shape, fp8);
        SCOPED_TRACE("head " + std::to_string(head) + " rows " +
                     std::to_string(shape.rows_per_block) + (fp8 ? " fp8" : " 16-bit"));
        ASSERT_GT(f.smem_bytes, 0);
        EXPECT_LE(f.blocks_per_sm * (f.smem_bytes + 1024), 228 * 1024);
      }
    }
  }
  EXPECT_EQ(kernels::gqa_kernel_facts(72, one_tile, false).smem_bytes, 0) << "not compiled";
}

/// A span the tensor-core kernel loads at once (kGqaTcKeysInFlight keys) is not split: the
/// largest size, one partition of a context that fits it, no merge.
TEST(GqaPartitionSize, SpansLoadedAtOnceAreNotSplit) {
  using kernels::choose_gqa_partition_size;
  const int64_t in_flight = kernels::kGqaTcKeysInFlight;
  const int32_t largest = kernels::kGqaPartitionSizes.back();
  // 1 sequence x 8 kv heads over 128 tokens: split into 64-token halves without the rule.
  EXPECT_EQ(choose_gqa_partition_size(8, 128, 128, 132), 64);
  EXPECT_EQ(choose_gqa_partition_size(8, 128, 128, 132, in_flight), largest);
  EXPECT_EQ(choose_gqa_partition_size(8, 1, 1, 132, in_flight), largest);
  // A window of 128 keys in a 16384-token context: one partition covers it.
  EXPECT_EQ(choose_gqa_partition_size(64, 128, 16384, 132), 64);
  EXPECT_EQ(choose_gqa_partition_size(64, 128, 16384, 132, in_flight), largest);
  // Longer spans follow the grid rule, with or without it.
  for (int64_t rows : {1, 8, 64, 1000}) {
    for (int64_t work : {in_flight + 1, int64_t{4096}}) {
      EXPECT_EQ(choose_gqa_partition_size(rows, work, work, 132, in_flight),
                choose_gqa_partition_size(rows, work, work, 132));
    }
  }
  // The grid bound still holds: with a short window a 2^29-token context takes the largest
  // size (32768 partitions), a 2^31-token one none (no size fits the grid).
  EXPECT_EQ(choose_gqa_partition_size(8, 100, int64_t{1} << 29, 132, in_flight), largest);
  EXPECT_EQ(choose_gqa_partition_size(8, 100, int64_t{1} << 31, 132, in_flight), 0);
}

TEST(GqaLoadMode, VectorsWhereTheStridesAllowThemElementsElsewhere) {
  using kernels::gqa_load_mode;
  // float16, 2 kv heads, head 128, block 16 (x = 8).
  const pc_cache_strides xkey{2 * 128 * 16, 128 * 16, 8, 16 * 8, 1, 8};
  const pc_cache_strides xvalue{2 * 128 * 16, 128 * 16, 1, 0, 16, 128};
  const pc_cache_strides nhd{16 * 2 * 128, 128, 2 * 128, 0, 1, 128};
  const pc_cache_strides doubled{2 * 16 * 2 * 128, 2 * 128, 2 * 2 * 128, 0, 2, 128};
  EXPECT_EQ(gqa_load_mode(xkey, 128, 16, 2, true), kernels::kGqaLoadDimVector);
  EXPECT_EQ(gqa_load_mode(xvalue, 128, 16, 2, true), kernels::kGqaLoadSlotVector);
  EXPECT_EQ(gqa_load_mode(nhd, 128, 16, 2, true), kernels::kGqaLoadDimVector);
  EXPECT_EQ(gqa_load_mode(nhd, 128, 16, 1, true), kernels::kGqaLoadDimVector);
  EXPECT_EQ(gqa_load_mode(doubled, 128, 16, 2, true), kernels::kGqaLoadScalar);
  EXPECT_EQ(gqa_load_mode(nhd, 128, 16, 2, false), kernels::kGqaLoadScalar);
  EXPECT_EQ(gqa_load_mode(xvalue, 128, 1, 2, true), kernels::kGqaLoadScalar);  // block size 1
  pc_cache_strides odd = nhd;
  odd.slot += 3;
  EXPECT_EQ(gqa_load_mode(odd, 128, 16, 2, true), kernels::kGqaLoadScalar);
}

}  // namespace
}  // namespace pagecheck

namespace pagecheck {
namespace {

/// The tensor-core kernel takes float16 / bfloat16 queries on a cache of their dtype or fp8
/// with 16-byte vectors (K along the dims, V along the dims or the slots) and 32-bit in-token
/// offsets; everything else goes to the CUDA-core kernel.
TEST(GqaTensorCores, ChosenOnlyWhereItsLoadsFit) {
  const pc_device_info device = h200();
  pc_paged_attention_args a = gqa_args();  // fp16 queries, fp8 NHD cache
  EXPECT_TRUE(kernels::gqa_uses_tensor_cores(a));
  EXPECT_TRUE(kernels::gqa_launch_shape(&device, a).tensor_cores);
  // 8 query heads per kv head x up to 4 tokens = 32 rows: two 8-row tiles a block.
  EXPECT_EQ(kernels::gqa_launch_shape(&device, a).rows_per_block, 2 * kernels::kGqaTensorCoreRows);
  pc_paged_attention_args decode = a;
  decode.batch.max_query_len = 1;  // 8 rows: one tile
  EXPECT_EQ(kernels::gqa_launch_shape(&device, decode).rows_per_block, kernels::kGqaTensorCoreRows);
  a.dtype = PC_DTYPE_BFLOAT16;
  EXPECT_TRUE(kernels::gqa_uses_tensor_cores(a));
  a.dtype = PC_DTYPE_FLOAT32;
  EXPECT_FALSE(kernels::gqa_uses_tensor_cores(a)) << "float32 queries";
  EXPECT_FALSE(kernels::gqa_launch_shape(&device, a).tensor_cores);

  pc_paged_attention_args odd = gqa_args();
  odd.key_cache = static_cast<const char*>(odd.key_cache) + 1;  // not 16-byte aligned
  EXPECT_FALSE(kernels::gqa_uses_tensor_cores(odd)) << "misaligned K";
  odd = gqa_args();
  odd.cache.value.dim = 2;  // V dims 2 apart, slots not contiguous: element by element
  odd.cache.value.slot = 2 * 128 * 2;
  EXPECT_FALSE(kernels::gqa_uses_tensor_cores(odd)) << "element-wise V";
  odd = gqa_args();
  odd.cache.key.block = int64_t{1} << 31;  // the kernel keeps the block stride in 32 bits
  odd.cache.value.block = int64_t{1} << 31;
  EXPECT_FALSE(kernels::gqa_uses_tensor_cores(odd)) << "block stride >= 2^31";
}

/// With a window the grid has only the partitions one chunk's span can touch, and every span
/// [lo(first row), hi(last row)) of every chunk lies inside the grid counted from the chunk's
/// first attended partition (the kernels' BlockSpan): checked over random calls.
TEST(GqaWindowedGrid, CoversEveryChunkSpanAndFollowsTheWindow) {
  const pc_device_info device = h200();
  pc_paged_attention_args a = gqa_args();
  a.batch.max_blocks_per_seq = a.batch.block_table_stride = 1024;
  a.batch.max_context_len = 16384;
  a.features.window = 128;
  const kernels::GqaLaunchShape windowed = kernels::gqa_launch_shape(&device, a);
  ASSERT_GT(windowed.partition_size, 0);
  EXPECT_EQ(windowed.partitions, (16384 + windowed.partition_size - 1) / windowed.partition_size);
  EXPECT_LE(windowed.grid_partitions,
            (128 + 4 - 1 + windowed.partition_size - 1) / windowed.partition_size + 1);
  EXPECT_LT(windowed.grid_partitions, windowed.partitions);
  a.features.window = 0;
  const kernels::GqaLaunchShape whole = kernels::gqa_launch_shape(&device, a);
  EXPECT_EQ(whole.grid_partitions, whole.partitions);

  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 2000; ++trial) {
    pc_paged_attention_args c = gqa_args();
    const int ctx = pick(1, 20000);
    const int qmax = pick(1, 16);
    c.batch.max_query_len = qmax;
    c.batch.max_context_len = ctx;
    c.batch.max_blocks_per_seq = c.batch.block_table_stride = (ctx + 15) / 16;
    c.features.window = pick(1, 3000);
    c.features.causal = pick(0, 1);
    c.batch.num_seqs = pick(1, 64);
    c.batch.num_query_tokens = c.batch.num_seqs * qmax;
    const kernels::GqaLaunchShape g = kernels::gqa_launch_shape(&device, c);
    ASSERT_GT(g.partition_size, 0);
    const int ps = g.partition_size, w = static_cast<int>(g.window);
    const int group = c.num_heads / c.cache.num_kv_heads;
    // One sequence of length ctx with q_len tokens; every chunk of rows_per_block rows.
    const int qlen = std::min(pick(1, qmax), ctx);
    const int rows = qlen * group;
    for (int v0 = 0; v0 < rows; v0 += g.rows_per_block) {
      const int v1 = std::min(rows, v0 + g.rows_per_block) - 1;
      const int pos_first = ctx - qlen + v0 / group, pos_last = ctx - qlen + v1 / group;
      const int lo = w > 0 ? std::max(0, pos_first - w + 1) : 0;
      const int hi = c.features.causal ? pos_last + 1 : ctx;
      const int first_part = w > 0 ? lo / ps : 0;
      const int last_part = (hi - 1) / ps;
      ASSERT_LT(last_part - first_part, g.grid_partitions)
          << "ctx " << ctx << " W " << w << " q_len " << qlen << " size " << ps << " chunk at row "
          << v0 << " spans partitions " << first_part << ".." << last_part;
      ASSERT_LT(last_part, g.partitions);
    }
  }
}

}  // namespace
}  // namespace pagecheck
