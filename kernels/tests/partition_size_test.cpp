/// preferred_partition_size / choose_partition_size: the v2_split launcher's partition size for
/// a grid, and within the workspace's bound (CPU only).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "attention/attention_params.h"

namespace pagecheck::kernels {
namespace {

constexpr int64_t kH200Slots = 4 * 132;  // float16 / head 128 / block 16 partition kernel

int64_t blocks(int64_t rows, int64_t ctx, int64_t size) {
  return rows * ((ctx + size - 1) / size);
}

TEST(PartitionSize, BenchShapesOnTheH200) {
  // One wave at 256 tokens and at 128: halved.
  EXPECT_EQ(preferred_partition_size(40, 512, kH200Slots), 128);   // mha b1 x 512: 160 blocks
  EXPECT_EQ(preferred_partition_size(40, 1024, kH200Slots), 128);  // mha b1 x 1024: 320 blocks
  EXPECT_EQ(preferred_partition_size(64, 512, kH200Slots), 128);   // gqa b1 x 512: 256 blocks
  // One wave at 256 tokens but not at 128: unchanged.
  EXPECT_EQ(preferred_partition_size(40, 2048, kH200Slots), 256);  // mha b1 x 2048: 320 blocks
  EXPECT_EQ(preferred_partition_size(64, 2048, kH200Slots), 256);  // gqa b1 x 2048: 512 blocks
  // A row within one partition of 256 keeps the single-kernel path.
  EXPECT_EQ(preferred_partition_size(40, 256, kH200Slots), 256);
  EXPECT_EQ(preferred_partition_size(8 * 40, 128, kH200Slots), 256);
  // Two waves at 256 tokens become one: 640 blocks of 256 -> 440 of 384; 1024 -> 512 of 512.
  EXPECT_EQ(preferred_partition_size(40, 4096, kH200Slots), 384);
  EXPECT_EQ(preferred_partition_size(64, 4096, kH200Slots), 512);
  // Still at least two full waves at 512 tokens: 512.
  EXPECT_EQ(preferred_partition_size(8 * 40, 2048, kH200Slots), 512);
  EXPECT_EQ(preferred_partition_size(8 * 64, 4096, kH200Slots), 512);
  EXPECT_EQ(preferred_partition_size(128 * 40, 2048, kH200Slots), 512);
  // Up to two waves at 256 and more than half a wave of rows: one partition per row in one
  // wave. mha b8 x 512: 640 blocks of 256 -> 320 of 512; gqa b8 x 512: 1024 -> 512 of 512.
  EXPECT_EQ(preferred_partition_size(8 * 40, 512, kH200Slots), 512);
  EXPECT_EQ(preferred_partition_size(8 * 64, 512, kH200Slots), 512);
  EXPECT_EQ(preferred_partition_size(8 * 40, 700, kH200Slots), 768);  // 3 x 320 blocks of 256
  // More than two waves at 256, fewer than two at 512: 256.
  EXPECT_EQ(preferred_partition_size(8 * 40, 1024, kH200Slots), 256);
  // No occupancy known, or nothing to split: 256.
  EXPECT_EQ(preferred_partition_size(40, 4096, 0), 256);
  EXPECT_EQ(preferred_partition_size(0, 4096, kH200Slots), 256);
}

TEST(PartitionSize, EveryChoiceIsALegalSizeThatHelpsTheGrid) {
  for (int64_t slots : {1, 7, 100, 264, 528, 1056, 2112}) {
    for (int64_t rows : {1, 2, 3, 5, 8, 40, 64, 100, 320, 1000}) {
      for (int64_t ctx = 1; ctx <= 16384; ctx = ctx * 3 / 2 + 7) {
        const int size = preferred_partition_size(rows, ctx, slots);
        SCOPED_TRACE(::testing::Message()
                     << "rows " << rows << " ctx " << ctx << " slots " << slots << " -> " << size);
        ASSERT_EQ(size % kPartitionGranule, 0);
        ASSERT_GE(size, kSmallPartitionSize);
        ASSERT_LE(size, kMaxPartitionSize);
        ASSERT_EQ(size % 32, 0);  // whole cache blocks of every block size
        if (size == kPartitionSize) continue;
        if (size == kSmallPartitionSize) {
          // Halves only where a row needs more than one partition and both grids fit one wave.
          ASSERT_GT(ctx, kPartitionSize);
          ASSERT_LE(blocks(rows, ctx, size), slots);
          continue;
        }
        // A larger partition only where 256 needs more than one wave, and either many waves
        // remain (512) or the grid now fits one wave that is at least half full, with at
        // least two partitions per row.
        ASSERT_GT(blocks(rows, ctx, kPartitionSize), slots);
        if (size == 2 * kPartitionSize && blocks(rows, ctx, size) >= 2 * slots) continue;
        ASSERT_LE(blocks(rows, ctx, size), slots);
        ASSERT_GE(2 * blocks(rows, ctx, size), slots);
        if (blocks(rows, ctx, size) == rows) {
          // One partition per row: only where the rows alone fill more than half the wave.
          ASSERT_GT(2 * rows, slots);
          ASSERT_LT(size - kPartitionGranule, ctx);  // the context rounded up to the granule
          continue;
        }
        ASSERT_GE(blocks(rows, ctx, size), 2 * rows);
      }
    }
  }
}

TEST(PartitionSize, TheWorkspaceBoundsTheChoice) {
  for (int64_t slots : {1, 100, 528, 1056, 4096}) {
    for (int64_t rows : {1, 3, 40, 64, 320, 1000}) {
      for (int64_t ctx = 1; ctx <= 16384; ctx = ctx * 3 / 2 + 7) {
        const int preferred = preferred_partition_size(rows, ctx, slots);
        const int64_t needed = (ctx + preferred - 1) / preferred;
        const int64_t at_default = (ctx + kPartitionSize - 1) / kPartitionSize;
        SCOPED_TRACE(::testing::Message() << "rows " << rows << " ctx " << ctx << " slots " << slots
                                          << " prefers " << preferred);
        // The workspace the host sizes (for grids of at most 4096 slots) holds the preference.
        EXPECT_EQ(choose_partition_size(rows, ctx, slots, workspace_partitions(rows, ctx)),
                  preferred);
        // A smaller bound: the preference where it fits, else the default size, never more
        // partitions than the bound when that holds the default.
        for (int64_t capacity = at_default; capacity <= needed + 1; ++capacity) {
          const int size = choose_partition_size(rows, ctx, slots, capacity);
          ASSERT_EQ(size, needed <= capacity ? preferred : kPartitionSize);
          ASSERT_LE((ctx + size - 1) / size, capacity);
        }
      }
    }
  }
}

TEST(PartitionSize, TheDeclaredListIsExactlyWhatTheFunctionPicks) {
  // v2_split declares kPartitionSizes (pc_variant::partition_sizes). Every size the launcher
  // picks over a sweep of grids must be in it, and every declared size must be picked by some
  // grid: the list is the function's range, neither more nor less.
  std::set<int> picked;
  for (int64_t slots = 1; slots <= 4096; slots = slots * 5 / 4 + 1) {
    for (int64_t rows = 1; rows <= 2048; rows = rows * 3 / 2 + 1) {
      for (int64_t ctx = 1; ctx <= 65536; ctx = ctx * 5 / 4 + 3) {
        const int size = preferred_partition_size(rows, ctx, slots);
        ASSERT_NE(std::find(kPartitionSizes.begin(), kPartitionSizes.end(), size),
                  kPartitionSizes.end())
            << "rows " << rows << " ctx " << ctx << " slots " << slots << " -> " << size
            << " is not declared";
        picked.insert(size);
      }
    }
  }
  for (int32_t declared : kPartitionSizes) {
    EXPECT_EQ(picked.count(declared), 1u) << declared << " is declared but never picked";
  }
  EXPECT_EQ(picked.size(), kPartitionSizes.size());
}

}  // namespace
}  // namespace pagecheck::kernels
