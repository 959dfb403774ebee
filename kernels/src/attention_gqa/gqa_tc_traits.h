#pragma once
/// Compile-time shape of v3_gqa's tensor-core partition kernel for one head size and ROWS query
/// rows a block (8 or 16: one or two 8-row tiles): tile and pipeline sizes and the shared-memory
/// layout, usable on the host (shared-memory checks) and the device. The query and its tile are
/// 16-bit (float16 or bfloat16); the K/V stages hold cache elements of KV_BYTES bytes (2: the
/// query dtype, 1: fp8 codes). The threads and the stage layout (what the copies see) do not
/// depend on ROWS.
#include <cstdint>

#include "attention_gqa/gqa_params.h"

namespace pagecheck::kernels::gqa {

template <int HEAD, int KV_BYTES, int ROWS = kGqaTensorCoreRows>
struct GqaTcTraits {
  /// Warps per key group: 2 (each accumulates half of O's dims) above head size 128, where a
  /// whole head's O^T accumulators (HEAD / 2 floats a thread) would crowd the registers; else 1.
  /// The warps of a key group compute the same S^T (bit-identical).
  static constexpr int kDimSplit = HEAD > 128 ? 2 : 1;
  static constexpr int kKeyGroups = 4;                   ///< warps along a stage's keys
  static constexpr int kWarps = kKeyGroups * kDimSplit;  ///< warps per block
  static constexpr int kThreads = 32 * kWarps;           ///< threads per block
  static constexpr int kDimsPerWarp = HEAD / kDimSplit;  ///< O dims each warp accumulates
  /// Query rows per block: kRowTiles tiles of 8, each the mma N of S^T = K Q^T and O^T = V^T
  /// P^T (keys and dims are M). Every warp computes every row tile with the same K and V
  /// fragments, so more rows never re-read the cache.
  static constexpr int kRows = ROWS;
  static constexpr int kRowTiles = ROWS / kGqaTensorCoreRows;
  static constexpr int kTile = 64;                   ///< keys per pipeline stage
  static constexpr int kKeysPerWarp = 16;            ///< keys of a stage a warp computes (mma M)
  static constexpr int kVector = 16 / KV_BYTES;      ///< cache elements per 16-byte copy
  static constexpr int kQueryStride = HEAD + 8;      ///< elements per query tile row (16-byte skew)
  static constexpr int kRowStride = HEAD + kVector;  ///< cache elements per [key][dim] row
  static constexpr int kSlotStride = kTile + kVector;  ///< cache elements per [dim][key] row

  static constexpr int64_t kQueryBytes = int64_t{kRows} * kQueryStride * 2;     ///< [kRows][HEAD] Q
  static constexpr int64_t kKeyBytes = int64_t{kTile} * kRowStride * KV_BYTES;  ///< [key][dim]
  static constexpr int64_t kKeyTileElems = int64_t{kTile} * kRowStride;         ///< [key][dim] tile
  static constexpr int64_t kSlotTileElems = int64_t{HEAD} * kSlotStride;        ///< [dim][key] tile
  /// V tile: [key][dim] (dims contiguous in the cache) or [dim][key] (slots contiguous).
  static constexpr int64_t kValueBytes =
      KV_BYTES * (kKeyTileElems > kSlotTileElems ? kKeyTileElems : kSlotTileElems);
  static constexpr int64_t kStageBytes = kKeyBytes + kValueBytes;  ///< one pipeline stage
  /// The per-block offset tables of the copies (StageOffsets), after the stages.
  static constexpr int64_t kOffsetBytes = 4 * (2 * (HEAD / kVector) + HEAD);
  /// Shared memory per block that keeps three / two blocks on an SM of 228 KB (1 KB reserved
  /// each).
  static constexpr int64_t kThreeBlockBudget = 75 * 1024;
  static constexpr int64_t kTwoBlockBudget = 113 * 1024;
  /// Stages that fit in those budgets next to Q and the offset tables.
  static constexpr int64_t kFit3 = (kThreeBlockBudget - kQueryBytes - kOffsetBytes) / kStageBytes;
  static constexpr int64_t kFit2 = (kTwoBlockBudget - kQueryBytes - kOffsetBytes) / kStageBytes;
  /// Blocks per SM aimed at: 3 (12 warps) with one row tile; 2 with two, whose accumulators
  /// and Q fragments double (registers, not shared memory, bound them).
  static constexpr int kTargetBlocks = kRowTiles == 1 ? 3 : 2;
  /// Pipeline stages: up to 4, as many as keep kTargetBlocks blocks on an SM when at least two
  /// do, else as many as keep two blocks, at least 2.
  static constexpr int kStages =
      static_cast<int>(kTargetBlocks == 3 && kFit3 >= 2 ? (kFit3 > 4 ? 4 : kFit3)
                                                        : (kFit2 > 4   ? 4
                                                           : kFit2 < 2 ? 2
                                                                       : kFit2));
  /// The warps' accumulators, maxima and sums meet over Q and the stages after the last tile.
  static constexpr int64_t kMergeBytes = int64_t{kKeyGroups} * kRows * (HEAD + 2) * 4;
  /// Dynamic shared memory of the kernel, bytes.
  static constexpr int64_t kSmemBytes = kQueryBytes + kStages * kStageBytes + kOffsetBytes;
  /// Registers a thread's fragments hold for the whole partition: O^T's accumulators and Q's B
  /// fragments, for every row tile.
  static constexpr int kFragmentRegisters = kRowTiles * (kDimsPerWarp / 16 * 4 + HEAD / 16 * 2);
  /// Blocks per SM whose register share (65536 a SM) still leaves 96 registers a thread beside
  /// the fragments (S^T, addresses, the softmax). Held to 128 registers (2 blocks of 256
  /// threads), ptxas spilled 120 bytes a thread at head 192 (one row tile, fp16 cache) and 480
  /// at head 256 (two row tiles, fp8); with this rule no head size spills.
  static constexpr int kRegisterBlocks = 65536 / (kThreads * (kFragmentRegisters + 96));
  /// Blocks per SM the shared memory allows (kTargetBlocks at most).
  static constexpr int kSmemBlocks = kSmemBytes <= kThreeBlockBudget ? kTargetBlocks
                                     : kSmemBytes <= kTwoBlockBudget ? 2
                                                                     : 1;
  /// Blocks per SM the register budget is held to (__launch_bounds__): as many as the shared
  /// memory and the registers both allow, at least 1.
  static constexpr int kMinBlocksPerSm = kRegisterBlocks < 1             ? 1
                                         : kRegisterBlocks < kSmemBlocks ? kRegisterBlocks
                                                                         : kSmemBlocks;

  static_assert(HEAD % 16 == 0 && HEAD >= 32, "tensor-core head sizes are multiples of 16");
  static_assert(kKeyGroups * kKeysPerWarp == kTile, "the key groups split a stage's keys");
  static_assert(kStages * kTile >= kGqaTcKeysInFlight, "the partition rule's keys in flight");
  static_assert(kDimsPerWarp % 16 == 0, "a warp's dims are whole 16-dim m-tiles");
  static_assert(kRows == 8 || kRows == 16, "one or two 8-row tiles (the n8 of mma.m16n8k16)");
  static_assert(kMergeBytes <= kQueryBytes + kStages * kStageBytes, "merge space fits");
  static_assert(KV_BYTES == 1 || KV_BYTES == 2, "16-bit or fp8 cache elements");
  static_assert(kQueryBytes % 16 == 0 && kKeyBytes % 16 == 0 && kValueBytes % 16 == 0,
                "16-byte aligned sections");
};

}  // namespace pagecheck::kernels::gqa
