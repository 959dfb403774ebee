#pragma once
/// Compile-time shape of v3_gqa's partition kernel for one (head size, rows per block): thread
/// mapping and shared-memory layout, usable on the host (shared-memory checks) and the device.
#include <cstdint>

namespace pagecheck::kernels::gqa {

template <int HEAD, int ROWS>
struct GqaTraits {
  static constexpr int kThreads = 128;  ///< threads per block
  static constexpr int kWarps = 4;      ///< warps per block
  /// Tokens per tile: 64 up to head size 128 (two per lane in q.k), else 32 (shared memory).
  static constexpr int kTile = HEAD <= 128 ? 64 : 32;
  static constexpr int kTokensPerLane = kTile / 32;      ///< q.k tokens per lane
  static constexpr int kTokensPerWarp = kTile / kWarps;  ///< P.V tokens per warp
  static constexpr int kStride = HEAD + 4;               ///< floats per tile row (bank skew)
  static constexpr int kSteps = HEAD / 4;                ///< float4 dim steps of q.k
  static constexpr int kDimsPerLane = (HEAD + 31) / 32;  ///< P.V dims per lane
  static constexpr int kRowsPerWarp = ROWS / kWarps;     ///< softmax rows per warp
  /// Blocks per SM the register budget is held to (__launch_bounds__): shared memory allows
  /// about 3 blocks of head size 128 (75 KB each) on an H200.
  static constexpr int kMinBlocksPerSm = 3;

  // Shared memory, in floats: K tile, V tile, queries, weights P[t][row], per-row alpha, max,
  // sum; then two int64 token-offset arrays.
  static constexpr int kKeyOffset = 0;
  static constexpr int kValueOffset = kKeyOffset + kTile * kStride;
  static constexpr int kQueryOffset = kValueOffset + kTile * kStride;
  static constexpr int kWeightOffset = kQueryOffset + ROWS * kStride;
  static constexpr int kAlphaOffset = kWeightOffset + kTile * ROWS;
  static constexpr int kMaxOffset = kAlphaOffset + ROWS;
  static constexpr int kSumOffset = kMaxOffset + ROWS;
  static constexpr int kFloats = (kSumOffset + ROWS + 3) / 4 * 4;
  /// Dynamic shared memory of the partition kernel, bytes.
  static constexpr int64_t kSmemBytes = int64_t{kFloats} * 4 + 2 * kTile * 8;

  static_assert(HEAD % 8 == 0 && HEAD >= 32, "head size must be a multiple of 8, at least 32");
  static_assert(ROWS % kWarps == 0 && ROWS >= 4, "rows per block: a multiple of the warps");
  static_assert(kWarps * ROWS * kTile <= kTile * kStride, "partial sums fit in the K tile");
  static_assert(kWarps * ROWS * HEAD <= kTile * kStride, "warp accumulators fit in the K tile");
  static_assert(kTile % kWarps == 0 && kTile % 16 == 0, "tiles split over warps and vectors");
  static_assert(kStride % 4 == 0 && kFloats % 2 == 0, "float4 rows, 8-byte aligned offsets");
  static_assert(ROWS * kDimsPerLane <= 64, "P.V accumulators per lane exceed the budget");
};

}  // namespace pagecheck::kernels::gqa
