#pragma once
/// The head sizes and block sizes of v1 and v2_split, and the tile each block size runs on.
/// The kernels walk a cache block in tiles of a compiled block size (PAGECHECK_BLOCK_SIZES, each
/// 8, 16 or 32): a block of 2^k tiles is k shifts away (AttentionParams::tile_shift), so every
/// power of two up to kMaxAttentionBlockSize that a compiled size divides runs on the largest
/// such tile without an instantiation of its own. v1 alone also takes head size 512, compiled
/// for the tile 8 only (every block size from 8 to 256 runs on it).
#include <array>
#include <cstdint>

#include "common/kernel_lists.h"

namespace pagecheck::kernels {

/// Largest block size of v1 and v2_split.
inline constexpr int kMaxAttentionBlockSize = 256;
/// The head size v1 takes beyond PAGECHECK_HEAD_SIZES (v2_split and v3_gqa do not).
inline constexpr int kV1WideHeadSize = 512;
/// The one tile kV1WideHeadSize is compiled for.
inline constexpr int kV1WideTile = 8;

/// True for 1, 2, 4, ...
constexpr bool is_power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

/// The tile a (head size, block size) runs on: the largest compiled block size dividing
/// block_size (kV1WideTile for kV1WideHeadSize); 0 when there is none or block_size is not a
/// power of two <= kMaxAttentionBlockSize.
constexpr int attention_tile(int64_t head_size, int64_t block_size) {
  if (!is_power_of_two(block_size) || block_size > kMaxAttentionBlockSize) return 0;
  if (head_size == kV1WideHeadSize) return block_size >= kV1WideTile ? kV1WideTile : 0;
  int tile = 0;
  for (int32_t t : kBlockSizes) {
    if (t <= block_size && block_size % t == 0 && t > tile) tile = t;
  }
  return tile;
}

/// log2(block_size / tile) for a tile attention_tile returned.
constexpr int attention_tile_shift(int64_t block_size, int tile) {
  int shift = 0;
  while ((int64_t{tile} << shift) < block_size) ++shift;
  return shift;
}

/// The powers of two from 8 to kMaxAttentionBlockSize with a tile for every declared head size
/// (those of PAGECHECK_HEAD_SIZES; v1's kV1WideHeadSize has a tile for each of them).
struct AttentionBlockSizes {
  std::array<int32_t, 6> sizes{};  ///< the block sizes, ascending
  int32_t count = 0;               ///< how many of `sizes` are used
};
constexpr AttentionBlockSizes attention_block_sizes() {
  AttentionBlockSizes list;
  for (int32_t bs = 8; bs <= kMaxAttentionBlockSize; bs *= 2) {
    if (attention_tile(kHeadSizes[0], bs) > 0 && attention_tile(kV1WideHeadSize, bs) > 0) {
      list.sizes[static_cast<size_t>(list.count++)] = bs;
    }
  }
  return list;
}
/// v1's and v2_split's declared block sizes.
inline constexpr AttentionBlockSizes kAttentionBlockSizes = attention_block_sizes();

/// v1's head sizes: PAGECHECK_HEAD_SIZES and kV1WideHeadSize.
inline constexpr std::array<int32_t, kNumHeadSizes + 1> kV1HeadSizes = [] {
  std::array<int32_t, kNumHeadSizes + 1> sizes{};
  for (int32_t i = 0; i < kNumHeadSizes; ++i) sizes[static_cast<size_t>(i)] = kHeadSizes[i];
  sizes[static_cast<size_t>(kNumHeadSizes)] = kV1WideHeadSize;
  return sizes;
}();

static_assert(attention_tile(128, 8) == 0 || attention_tile(128, 8) == 8, "tiles divide blocks");
static_assert(attention_tile_shift(256, 32) == 3 && attention_tile_shift(16, 16) == 0,
              "shift = log2(block / tile)");

}  // namespace pagecheck::kernels
