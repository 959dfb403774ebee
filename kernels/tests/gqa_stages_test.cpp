// v3_gqa's pipeline-stage rule (choose_gqa_stages, a host-side constexpr function): the blocks an
// SM holds share its shared memory in stages, within [kGqaTcMinStages, kGqaTcMaxStages] and no
// deeper than a block's tiles (CPU only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "attention_gqa/gqa_params.h"
#include "attention_gqa/gqa_tc_traits.h"

namespace pagecheck {
namespace {

using kernels::choose_gqa_stages;
using kernels::GqaTcPipeline;
using kernels::kGqaTcMaxStages;
using kernels::kGqaTcMinStages;
using kernels::kSmemReservedPerBlock;

/// sm_90's opt-in shared memory per block (227 KB; an SM holds 228 KB).
constexpr int64_t kSm90Block = 227 * 1024;

/// The configurations the kernel is built for at head 128 and 256: fp16 / fp8 stages, one or
/// two row tiles.
const GqaTcPipeline kPipelines[] = {
    kernels::gqa::GqaTcTraits<128, 2, 8>::kPipeline,
    kernels::gqa::GqaTcTraits<128, 1, 8>::kPipeline,
    kernels::gqa::GqaTcTraits<128, 2, 16>::kPipeline,
    kernels::gqa::GqaTcTraits<128, 1, 16>::kPipeline,
    kernels::gqa::GqaTcTraits<256, 2, 8>::kPipeline,
    kernels::gqa::GqaTcTraits<256, 1, 16>::kPipeline,
    kernels::gqa::GqaTcTraits<64, 2, 8>::kPipeline,
    kernels::gqa::GqaTcTraits<32, 1, 8>::kPipeline,
};

int64_t block_bytes(const GqaTcPipeline& pipe, int64_t stages) {
  return pipe.fixed_bytes + stages * pipe.stage_bytes;
}

/// Whatever the grid, the chosen stages of the blocks an even spread puts on an SM fit its
/// shared memory together, and one stage more would not (unless a cap holds).
TEST(GqaStages, TheBlocksOfAnSmShareItsSharedMemory) {
  for (const GqaTcPipeline& pipe : kPipelines) {
    ASSERT_GE(pipe.max_blocks, 1);
    ASSERT_LE(block_bytes(pipe, kGqaTcMinStages), kSm90Block) << "the host check would refuse";
    for (int64_t sms : {132, 114, 8}) {
      int32_t previous = kGqaTcMaxStages;
      for (int64_t blocks : {1, 7, 100, 131, 132, 133, 200, 264, 265, 396, 397, 1000, 100000}) {
        const int64_t tiles = 1000;
        const int32_t stages = choose_gqa_stages(blocks, tiles, sms, kSm90Block, pipe);
        SCOPED_TRACE("stage bytes " + std::to_string(pipe.stage_bytes) + " sms " +
                     std::to_string(sms) + " blocks " + std::to_string(blocks) + " stages " +
                     std::to_string(stages));
        ASSERT_GE(stages, kGqaTcMinStages);
        ASSERT_LE(stages, kGqaTcMaxStages);
        EXPECT_LE(stages, previous) << "more blocks a SM never get deeper pipelines";
        previous = stages;
        // The blocks an SM holds: an even spread, at most max_blocks, and no more than fit at
        // the fewest stages.
        int64_t resident = std::min<int64_t>((blocks + sms - 1) / sms, pipe.max_blocks);
        const int64_t sm_bytes = kSm90Block + kSmemReservedPerBlock;
        while (resident > 1 &&
               resident * (block_bytes(pipe, kGqaTcMinStages) + kSmemReservedPerBlock) > sm_bytes) {
          --resident;
        }
        EXPECT_LE(block_bytes(pipe, stages), kSm90Block);
        if (stages > kGqaTcMinStages) {
          EXPECT_LE(resident * (block_bytes(pipe, stages) + kSmemReservedPerBlock), sm_bytes);
        }
        if (stages < kGqaTcMaxStages) {
          EXPECT_TRUE(resident * (block_bytes(pipe, stages + 1) + kSmemReservedPerBlock) >
                          sm_bytes ||
                      block_bytes(pipe, stages + 1) > kSm90Block)
              << "one stage more would still fit";
        }
      }
    }
  }
}

/// Head 128, fp16 cache, one row tile (the bench's gqa shapes) on 132 SMs: one block an SM
/// takes six stages, two take three, three (a full grid) two; fp8 stages are half the bytes.
TEST(GqaStages, HeadOneTwentyEightOnAnH200) {
  const GqaTcPipeline f16 = kernels::gqa::GqaTcTraits<128, 2, 8>::kPipeline;
  EXPECT_EQ(f16.max_blocks, 3);
  EXPECT_EQ(choose_gqa_stages(116, 1000, 132, kSm90Block, f16), 6);
  EXPECT_EQ(choose_gqa_stages(132, 1000, 132, kSm90Block, f16), 6);
  EXPECT_EQ(choose_gqa_stages(256, 1000, 132, kSm90Block, f16), 3);
  EXPECT_EQ(choose_gqa_stages(396, 1000, 132, kSm90Block, f16), 2);
  EXPECT_EQ(choose_gqa_stages(8192, 1000, 132, kSm90Block, f16), 2);
  const GqaTcPipeline fp8 = kernels::gqa::GqaTcTraits<128, 1, 8>::kPipeline;
  EXPECT_EQ(choose_gqa_stages(8192, 1000, 132, kSm90Block, fp8), 3);
  EXPECT_EQ(choose_gqa_stages(132, 1000, 132, kSm90Block, fp8), kGqaTcMaxStages);
}

/// No deeper than every tile in flight at once, never below the minimum, and the minimum where
/// the device's shared memory is unknown (0).
TEST(GqaStages, BoundedByTheTilesAndTheMinimum) {
  const GqaTcPipeline f16 = kernels::gqa::GqaTcTraits<128, 2, 8>::kPipeline;
  EXPECT_EQ(choose_gqa_stages(8, 1, 132, kSm90Block, f16), kGqaTcMinStages);
  EXPECT_EQ(choose_gqa_stages(8, 2, 132, kSm90Block, f16), 3);
  EXPECT_EQ(choose_gqa_stages(8, 3, 132, kSm90Block, f16), 4);
  EXPECT_EQ(choose_gqa_stages(8, 0, 132, kSm90Block, f16), kGqaTcMinStages);
  EXPECT_EQ(choose_gqa_stages(8, 1000, 132, 0, f16), kGqaTcMinStages);
  EXPECT_EQ(choose_gqa_stages(0, 1000, 0, kSm90Block, f16), 6) << "132 SMs assumed";
  // A block that alone needs more than half an SM: one a SM, as many stages as fit.
  const GqaTcPipeline h256 = kernels::gqa::GqaTcTraits<256, 2, 16>::kPipeline;
  EXPECT_EQ(h256.max_blocks, 1);
  const int32_t s = choose_gqa_stages(100000, 1000, 132, kSm90Block, h256);
  EXPECT_LE(block_bytes(h256, s), kSm90Block);
  EXPECT_GT(block_bytes(h256, s + 1), kSm90Block);
}

}  // namespace
}  // namespace pagecheck
