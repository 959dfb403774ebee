/// Byte formulas and the built-in sweeps.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "pagecheck/bench/bytes.h"

namespace pagecheck::bench {
namespace {

TEST(Bytes, GatherMovesKeyAndValueOnceEachWayPlusSlots) {
  const BenchShape s = copy_shape(PC_FAMILY_GATHER_CACHED_KV, 4096, 40, 128, 8, DType::kFloat16);
  const ByteCount c = bytes_moved(s);
  // K and V: 4096 tokens x 40 heads x 128 dims x 2 bytes each = 41,943,040 bytes apiece.
  EXPECT_EQ(c.read, 2 * 41943040ll + 8 * 4096);
  EXPECT_EQ(c.written, 2 * 41943040ll);
  EXPECT_EQ(c.total(), 167804928ll);
}

TEST(Bytes, ReshapeAndCacheMovesTheSameBytesAsGather) {
  const BenchShape g = copy_shape(PC_FAMILY_GATHER_CACHED_KV, 1000, 8, 64, 16, DType::kFloat32);
  const BenchShape r = copy_shape(PC_FAMILY_RESHAPE_AND_CACHE, 1000, 8, 64, 16, DType::kFloat32);
  EXPECT_EQ(bytes_moved(g).read, bytes_moved(r).read);
  EXPECT_EQ(bytes_moved(r).written, 2 * 1000 * 8 * 64 * 4);
}

TEST(Bytes, AttentionReadsContextPerKvHeadQueryTableAndLengths) {
  // batch 8, context 1000 (63 blocks of 16, last one partial), 40 heads, head 128, fp16.
  const BenchShape s = attention_shape(8, 1000, 40, 40, 128, 16, DType::kFloat16);
  const ByteCount c = bytes_moved(s);
  const int64_t kv = 2ll * 8 * 1000 * 40 * 128 * 2;  // tokens, not whole blocks
  const int64_t query = 8ll * 40 * 128 * 2;
  const int64_t table = 4ll * 8 * 63;
  const int64_t lens = 4ll * 8;
  EXPECT_EQ(c.read, kv + query + table + lens);
  EXPECT_EQ(c.written, query);
}

TEST(Bytes, GqaCountsKvHeadsNotQueryHeadsForTheCache) {
  const BenchShape mha = attention_shape(4, 2048, 64, 64, 128, 16, DType::kFloat16);
  const BenchShape gqa = attention_shape(4, 2048, 64, 8, 128, 16, DType::kFloat16);
  const int64_t q_and_out = 2 * 4ll * 64 * 128 * 2;
  const int64_t other = 4ll * 4 * 128 + 4 * 4;  // table entries + lengths
  EXPECT_EQ(bytes_moved(mha).total() - q_and_out - other, 2ll * 4 * 2048 * 64 * 128 * 2);
  EXPECT_EQ(bytes_moved(gqa).total() - q_and_out - other, 2ll * 4 * 2048 * 8 * 128 * 2);
}

TEST(Bytes, Fp8CachesCountOneBytePerCacheElementPlusScales) {
  const BenchShape g =
      with_variation(copy_shape(PC_FAMILY_GATHER_CACHED_KV, 1000, 8, 64, 16, DType::kFloat16),
                     ref::CacheKind::kNHD, DType::kFloat8E4M3);
  const int64_t elems = 2ll * 1000 * 8 * 64;
  EXPECT_EQ(bytes_moved(g).read, elems + 8 * 1000 + 8);  // codes, slots, k_scale + v_scale
  EXPECT_EQ(bytes_moved(g).written, 2 * elems);          // float16 rows
  const BenchShape r =
      with_variation(copy_shape(PC_FAMILY_RESHAPE_AND_CACHE, 1000, 8, 64, 16, DType::kFloat32),
                     ref::CacheKind::kXSplit, DType::kFloat8E5M2);
  EXPECT_EQ(bytes_moved(r).read, 4 * elems + 8 * 1000 + 8);
  EXPECT_EQ(bytes_moved(r).written, elems);
  const BenchShape a = with_variation(attention_shape(2, 512, 8, 2, 64, 16, DType::kBFloat16),
                                      ref::CacheKind::kHND, DType::kFloat8E4M3);
  const int64_t q = 2ll * 8 * 64 * 2;
  EXPECT_EQ(bytes_moved(a).read, 2ll * 2 * 512 * 2 * 64 + q + 4 * 2 * 32 + 4 * 2 + 8);
}

TEST(Bytes, WindowsReadTheLastWPlusQMinusOneTokensAndMultiTokenRowsCountEveryRow) {
  // Context 1000, window 100, 4 query tokens: tokens 897..999 (103 tokens) of blocks 56..62.
  const BenchShape s = with_variation(attention_shape(3, 1000, 8, 8, 64, 16, DType::kFloat16),
                                      ref::CacheKind::kXSplit, std::nullopt, 100, 4);
  const ByteCount c = bytes_moved(s);
  const int64_t kv = 2ll * 3 * 103 * 8 * 64 * 2;
  const int64_t rows = 3ll * 4 * 8 * 64 * 2;
  EXPECT_EQ(c.read, kv + rows + 4ll * 3 * 7 + 4 * 3 + 4 * 4);
  EXPECT_EQ(c.written, rows);
  // A window wider than the context reads the whole context.
  const BenchShape wide = with_variation(attention_shape(3, 1000, 8, 8, 64, 16, DType::kFloat16),
                                         ref::CacheKind::kXSplit, std::nullopt, 4096);
  EXPECT_EQ(bytes_moved(wide).read,
            bytes_moved(attention_shape(3, 1000, 8, 8, 64, 16, DType::kFloat16)).read);
}

TEST(Bytes, BandwidthIsBytesPerMicrosecondInGigabytes) {
  EXPECT_DOUBLE_EQ(bandwidth_gbps(4'000'000'000ll, 1'000'000.0), 4.0);  // 4 GB in 1 s
  EXPECT_DOUBLE_EQ(bandwidth_gbps(3'000'000ll, 1.0), 3000.0);           // 3 MB in 1 us
  EXPECT_DOUBLE_EQ(bandwidth_gbps(100, 0.0), 0.0);
}

TEST(Sweeps, GatherSweepCoversTheIssueShapes) {
  const auto sweep = builtin_sweep(PC_FAMILY_GATHER_CACHED_KV, false);
  ASSERT_EQ(sweep.size(), 11u + 12u);  // 64 .. 65536, then the layout and fp8 rows
  EXPECT_EQ(sweep.front().num_tokens, 64);
  EXPECT_EQ(sweep[10].num_tokens, 65536);
  std::set<std::string> labels;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    const auto& s = sweep[i];
    labels.insert(s.label);
    EXPECT_EQ(shape_suffix(s).empty(), i < 11) << s.label;
    EXPECT_EQ(s.group, "tokens" + shape_suffix(s));
  }
  EXPECT_EQ(labels.size(), sweep.size());
  for (const char* label : {"t64_nhd", "t4096_hnd", "t65536_e4m3", "t4096_nhd_e4m3"}) {
    EXPECT_EQ(labels.count(label), 1u) << label;
  }
  for (const auto& s : sweep) {
    EXPECT_EQ(s.num_kv_heads, 40);
    EXPECT_EQ(s.head_size, 128);
    EXPECT_EQ(s.block_size, 8);
    EXPECT_EQ(s.dtype, DType::kFloat16);
    EXPECT_GE(s.num_blocks, 1024);
    EXPECT_GE(s.num_blocks, s.blocks_needed());
  }
  EXPECT_EQ(sweep[10].num_blocks, 8192);  // more blocks when needed
}

TEST(Sweeps, AttentionSweepIsTheMhaGridThenTheGqaGrid) {
  const auto sweep = builtin_sweep(PC_FAMILY_PAGED_ATTENTION, false);
  ASSERT_EQ(sweep.size(), 50u + 15u);  // the grids, then NHD / fp8 / window / q_len rows
  std::set<std::string> labels;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    const auto& s = sweep[i];
    labels.insert(s.label);
    EXPECT_EQ(s.block_size, 16);
    EXPECT_EQ(s.head_size, 128);
    EXPECT_EQ(s.num_heads, i < 25 ? 40 : 64);
    EXPECT_EQ(s.num_kv_heads, i < 25 ? 40 : 8);
    EXPECT_GE(s.num_blocks, s.blocks_needed());
    EXPECT_EQ(shape_suffix(s).empty(), i < 50) << s.label;
  }
  EXPECT_EQ(labels.size(), sweep.size());
  for (const char* label : {"gqa_b32_c4096_nhd", "gqa_b1_c4096_e4m3", "gqa_b128_c4096_nhd_e4m3",
                            "gqa_b8_c16384_w128", "gqa_b32_c16384_w1024", "gqa_b8_c4096_q4"}) {
    EXPECT_EQ(labels.count(label), 1u) << label;
  }
  EXPECT_EQ(sweep[0].label, "mha_b1_c128");
  EXPECT_EQ(sweep[24].label, "mha_b256_c4096");
  EXPECT_EQ(sweep[24].num_blocks, 256 * 256);
  EXPECT_EQ(sweep[25].label, "gqa_b1_c128");
}

TEST(Sweeps, SelectShapesKeepsTheOrderGivenAndNamesUnknownLabels) {
  const auto sweep = builtin_sweep(PC_FAMILY_GATHER_CACHED_KV, false);
  const auto picked = select_shapes(sweep, "t4096,t64");
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].num_tokens, 4096);
  EXPECT_EQ(picked[1].num_tokens, 64);
  try {
    select_shapes(sweep, "t64,t65");
    FAIL() << "unknown label accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'t65'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_shapes(sweep, ","), std::invalid_argument);
}

TEST(Sweeps, SweepForPicksDefaultQuickOrLabelsFromBoth) {
  std::string name;
  EXPECT_EQ(sweep_for(PC_FAMILY_PAGED_ATTENTION, false, "", DType::kFloat16, &name).size(), 65u);
  EXPECT_EQ(name, "default");
  EXPECT_EQ(sweep_for(PC_FAMILY_PAGED_ATTENTION, true, "", DType::kFloat16, &name).size(), 3u);
  EXPECT_EQ(name, "quick");
  const auto picked = sweep_for(PC_FAMILY_PAGED_ATTENTION, false, "gqa_b2_c300,mha_b1_c4096",
                                DType::kBFloat16, &name);
  EXPECT_EQ(name, "custom");
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].context_len, 300);  // from the quick sweep
  EXPECT_EQ(picked[1].dtype, DType::kBFloat16);
}

TEST(Sweeps, QuickCopySweepHasOneNhdFp8Row) {
  const auto quick = builtin_sweep(PC_FAMILY_RESHAPE_AND_CACHE, true);
  ASSERT_EQ(quick.size(), 3u);
  EXPECT_EQ(quick[2].label, "t1000_nhd_e4m3");
  EXPECT_EQ(quick[2].cache_kind, ref::CacheKind::kNHD);
  EXPECT_EQ(quick[2].cache_dtype(), DType::kFloat8E4M3);
  EXPECT_EQ(quick[2].dtype, DType::kFloat16);
}

TEST(Sweeps, VariationsValidate) {
  const BenchShape copy = copy_shape(PC_FAMILY_GATHER_CACHED_KV, 64, 4, 64, 8, DType::kFloat16);
  EXPECT_THROW(with_variation(copy, ref::CacheKind::kNHD, std::nullopt, 128),
               std::invalid_argument);
  EXPECT_THROW(with_variation(copy, ref::CacheKind::kNHD, DType::kBFloat16), std::invalid_argument);
  const BenchShape same = with_variation(copy, ref::CacheKind::kXSplit, DType::kFloat16);
  EXPECT_EQ(same.label, "t64");  // a KV dtype equal to dtype is no variation
  EXPECT_FALSE(same.kv_dtype.has_value());
  const BenchShape a = attention_shape(1, 8, 4, 4, 64, 16, DType::kFloat16);
  EXPECT_THROW(with_variation(a, ref::CacheKind::kXSplit, std::nullopt, 0, 9),
               std::invalid_argument);  // q_len above the context
}

TEST(Sweeps, ShapeValidationNamesTheField) {
  BenchShape s = copy_shape(PC_FAMILY_GATHER_CACHED_KV, 64, 40, 128, 8, DType::kFloat16);
  s.num_blocks = 2;  // 64 tokens need 8 blocks
  EXPECT_THROW(s.validate(), std::invalid_argument);
  EXPECT_THROW(attention_shape(1, 128, 40, 16, 128, 16, DType::kFloat16), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck::bench
