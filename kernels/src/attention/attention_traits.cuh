#pragma once
/// Compile-time thread mapping of the paged-attention kernels for one (dtype, head size, tile);
/// BLOCK_SIZE is the tile, the slots a warp walks at a time (a cache block holds 2^tile_shift
/// tiles). Every derived constant is checked here, so a bad combination fails to compile.
#include "attention/attention_params.h"
#include "common/vec.cuh"

namespace pagecheck::kernels {

template <typename T, int HEAD_SIZE, int BLOCK_SIZE>
struct AttentionTraits {
  static constexpr int kThreads = 128;  ///< threads per thread block
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kX = kVecElems<T>;         ///< elements per 16-byte vector (the cache's x)
  static constexpr int kGroups = HEAD_SIZE / kX;  ///< x-groups per head

  // Key phase: a warp covers one cache block in kKeySteps steps of kKeyTokensPerStep tokens;
  // kKeyThreadsPerToken consecutive lanes share a token, each loading whole 16-byte x-groups
  // (at most kMaxKeyVecs per lane, so the query fits in registers).
  static constexpr int kMaxKeyVecs = 8;
  static constexpr int kKeyThreadsPerToken =
      max_int(32 / BLOCK_SIZE, pow2_ceil(ceil_div(kGroups, kMaxKeyVecs)));
  static constexpr int kKeyTokensPerStep = 32 / kKeyThreadsPerToken;
  static constexpr int kKeySteps = BLOCK_SIZE / kKeyTokensPerStep;
  static constexpr int kKeyVecsPerThread = ceil_div(kGroups, kKeyThreadsPerToken);
  /// Steps whose loads are issued together (bounds the registers holding key vectors).
  static constexpr int kKeyStepUnroll =
      pow2_floor(max_int(1, min_int(kKeySteps, 16 / kKeyVecsPerThread)));
  /// Cache blocks whose key loads a warp issues together (at most 2), when one block's loads
  /// use less than the 16-vector budget: more bytes in flight per warp.
  static constexpr int kKeyBlockUnroll =
      min_int(2, max_int(1, 16 / (kKeyStepUnroll * kKeyVecsPerThread)));

  // Value phase: a lane loads 16-byte vectors of kX consecutive tokens of one head dimension;
  // kValueLanesPerRow lanes share a dimension, a warp covers kValueRowsPerStep dimensions and
  // kValueTokensPerChunk tokens at a time, and each lane accumulates kValueRowsPerThread dims.
  static constexpr int kValueVec = kX;
  static constexpr int kValueLanesPerRow =
      min_int(BLOCK_SIZE / kValueVec, max_int(1, pow2_floor(512 / HEAD_SIZE)));
  static constexpr int kValueTokensPerChunk = kValueVec * kValueLanesPerRow;
  static constexpr int kValueChunks = BLOCK_SIZE / kValueTokensPerChunk;
  static constexpr int kValueRowsPerStep = 32 / kValueLanesPerRow;
  static constexpr int kValueRowsPerThread = ceil_div(HEAD_SIZE, kValueRowsPerStep);
  static constexpr int kValueChunkUnroll =
      pow2_floor(max_int(1, min_int(kValueChunks, 16 / kValueRowsPerThread)));
  /// Cache blocks whose value loads a warp issues together (at most 2), as for the keys.
  /// Only when one pass covers the block's chunks, so the float32 accumulation order (block
  /// by block) is unchanged.
  static constexpr int kValueBlockUnroll =
      kValueChunkUnroll == kValueChunks
          ? min_int(2, max_int(1, 16 / (kValueChunkUnroll * kValueRowsPerThread)))
          : 1;

  /// v2_split only (the v1 kernels issue one block at a time): with two blocks in flight the
  /// kernel is held to 128 registers, 4 thread blocks per SM (16 warps of 8 KB loads in flight
  /// per SM instead of 5 blocks of 4 KB per warp). 0 leaves the register budget to ptxas.
  static constexpr int kSplitMinBlocksPerSm =
      (kKeyBlockUnroll > 1 || kValueBlockUnroll > 1) ? 4 : 0;

  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "storage type must be 2 or 4 bytes");
  static_assert(HEAD_SIZE % kX == 0, "head size must be a multiple of x");
  static_assert(BLOCK_SIZE == 8 || BLOCK_SIZE == 16 || BLOCK_SIZE == 32,
                "the tile (compiled block size) must be 8, 16 or 32");
  static_assert(kKeyThreadsPerToken >= 1 && kKeyThreadsPerToken <= 32 &&
                    (kKeyThreadsPerToken & (kKeyThreadsPerToken - 1)) == 0,
                "threads per token must be a power of two <= 32");
  static_assert(kKeyTokensPerStep <= BLOCK_SIZE && BLOCK_SIZE % kKeyTokensPerStep == 0,
                "a warp step must cover a whole number of steps per block");
  static_assert(kKeyVecsPerThread <= kMaxKeyVecs, "query registers per lane exceed the budget");
  static_assert(kValueVec <= BLOCK_SIZE, "a value vector must fit in one block");
  static_assert(BLOCK_SIZE % kValueTokensPerChunk == 0, "value chunks must tile the block");
  static_assert(32 % kValueLanesPerRow == 0, "value lanes per row must divide the warp");
  static_assert(kValueRowsPerThread <= 16, "value accumulators per lane exceed the budget");
  static_assert(kKeySteps % kKeyStepUnroll == 0, "key step unroll must divide the steps");
  static_assert(kValueChunks % kValueChunkUnroll == 0, "value unroll must divide the chunks");
  static_assert(kPartitionSize % BLOCK_SIZE == 0 && kMaxPartitionSize % kPartitionSize == 0,
                "partitions must hold whole blocks");

  /// Static shared memory of the main kernel (upper bound used by the host-side checks).
  static constexpr int kStaticSmemBytes = kWarps * HEAD_SIZE * 4 + kGroups * 16 + 2 * kWarps * 4;
};

}  // namespace pagecheck::kernels
