#pragma once
/// Compile-time shape of v3_gqa's tensor-core partition kernel for one head size: tile and
/// pipeline sizes and the shared-memory layout, usable on the host (shared-memory checks) and
/// the device. The query and its tile are 16-bit (float16 or bfloat16); the K/V stages hold
/// cache elements of KV_BYTES bytes (2: the query dtype, 1: fp8 codes).
#include <cstdint>

#include "attention_gqa/gqa_params.h"

namespace pagecheck::kernels::gqa {

template <int HEAD, int KV_BYTES>
struct GqaTcTraits {
  /// Warps per key group: 2 (each computes half of O's dims) when HEAD / 2 is a whole number of
  /// 16-dim steps, else 1. More warps per SM hide the latencies of the per-tile chain.
  static constexpr int kDimSplit = HEAD % 32 == 0 ? 2 : 1;
  static constexpr int kKeyGroups = 4;                   ///< warps along a stage's keys
  static constexpr int kWarps = kKeyGroups * kDimSplit;  ///< warps per block
  static constexpr int kThreads = 32 * kWarps;           ///< threads per block
  static constexpr int kDimsPerWarp = HEAD / kDimSplit;  ///< O dims each warp accumulates
  static constexpr int kRows = kGqaTensorCoreRows;       ///< query rows per block (the mma M)
  static constexpr int kTile = 64;                       ///< keys per pipeline stage
  static constexpr int kKeysPerWarp = 16;  ///< keys of a stage each warp computes (mma K of P.V)
  static constexpr int kVector = 16 / KV_BYTES;      ///< cache elements per 16-byte copy
  static constexpr int kQueryStride = HEAD + 8;      ///< elements per query tile row (16-byte skew)
  static constexpr int kRowStride = HEAD + kVector;  ///< cache elements per [key][dim] row
  static constexpr int kSlotStride = kTile + kVector;  ///< cache elements per [dim][key] row

  static constexpr int64_t kQueryBytes = int64_t{kRows} * kQueryStride * 2;     ///< [16][HEAD] Q
  static constexpr int64_t kKeyBytes = int64_t{kTile} * kRowStride * KV_BYTES;  ///< [key][dim]
  static constexpr int64_t kKeyTileElems = int64_t{kTile} * kRowStride;         ///< [key][dim] tile
  static constexpr int64_t kSlotTileElems = int64_t{HEAD} * kSlotStride;        ///< [dim][key] tile
  /// V tile: [key][dim] (dims contiguous in the cache) or [dim][key] (slots contiguous).
  static constexpr int64_t kValueBytes =
      KV_BYTES * (kKeyTileElems > kSlotTileElems ? kKeyTileElems : kSlotTileElems);
  static constexpr int64_t kStageBytes = kKeyBytes + kValueBytes;  ///< one pipeline stage
  /// Shared memory per block that keeps two blocks on an SM of 228 KB (1 KB reserved each).
  static constexpr int64_t kTwoBlockBudget = 113 * 1024;
  /// Stages that fit in that budget.
  static constexpr int64_t kFit =
      (kTwoBlockBudget - kQueryBytes - 4 * (2 * (HEAD / kVector) + HEAD)) / kStageBytes;
  /// Pipeline stages: as many (up to 4, at least 2) as keep two blocks per SM.
  static constexpr int kStages = static_cast<int>(kFit > 4 ? 4 : kFit < 2 ? 2 : kFit);
  /// The warps' accumulators, maxima and sums meet over Q and the stages after the last tile.
  static constexpr int64_t kMergeBytes = int64_t{kKeyGroups} * kRows * (HEAD + 2) * 4;
  /// The per-block offset tables of the copies (StageOffsets), after the stages.
  static constexpr int64_t kOffsetBytes = 4 * (2 * (HEAD / kVector) + HEAD);
  /// Dynamic shared memory of the kernel, bytes.
  static constexpr int64_t kSmemBytes = kQueryBytes + kStages * kStageBytes + kOffsetBytes;
  /// Blocks per SM the register budget is held to (__launch_bounds__).
  static constexpr int kMinBlocksPerSm = kSmemBytes <= kTwoBlockBudget ? 2 : 1;

  static_assert(HEAD % 16 == 0 && HEAD >= 32, "tensor-core head sizes are multiples of 16");
  static_assert(kKeyGroups * kKeysPerWarp == kTile, "the key groups split a stage's keys");
  static_assert(kDimsPerWarp % 16 == 0, "a warp's dims are whole 16-dim steps");
  static_assert(kMergeBytes <= kQueryBytes + kStages * kStageBytes, "merge space fits");
  static_assert(KV_BYTES == 1 || KV_BYTES == 2, "16-bit or fp8 cache elements");
  static_assert(kQueryBytes % 16 == 0 && kKeyBytes % 16 == 0 && kValueBytes % 16 == 0,
                "16-byte aligned sections");
};

}  // namespace pagecheck::kernels::gqa
