#pragma once
/// Internal to the reference: decodes the slots of one (block, kv head) tile of a paged cache
/// tensor into doubles.
///
/// Offsets come from the layout's own accessor: a TilePlan lists, once per layout, the runs of
/// consecutive elements of a tile (key_at / value_at of the run's first element, relative to
/// element (0, 0) of the tile); a tile's runs then start at key_at(block, head, 0, 0) plus that
/// offset, which is the accessor's value because offsets are linear in block and head.
///
/// Float16 goes through the F16C instruction when the CPU has it (an exact IEEE conversion),
/// otherwise (or when the environment variable PAGECHECK_REFERENCE_NO_F16C is set) through a
/// 65536-entry table built with Eigen::half; bfloat16 is a 16-bit shift into a float; float32
/// is widened; fp8 codes go through a 256-entry table of their exact values. All are exact, and
/// so is the fp8 dequantization: a code has at most 4 significant bits and a float32 scale 24,
/// so code * scale is exact in double.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/layout.h"

namespace pagecheck::ref::detail {

/// Which tensor of the cache a tile belongs to.
enum class CacheTensor { kKey, kValue };

/// Where a decoded tile goes: element (slot, dim) at dst[slot * slot_stride + dim * dim_stride].
struct TileTarget {
  int64_t slot_stride = 0;  ///< doubles between consecutive slots
  int64_t dim_stride = 0;   ///< doubles between consecutive dims
};

/// The runs of consecutive elements that make up one tile of a cache tensor, and where each
/// run goes in the decoded tile.
struct TilePlan {
  /// One run: `length` elements at unit stride, starting at tile element (slot, dim).
  struct Run {
    int64_t offset = 0;  ///< element offset of (slot, dim) from the tile's element (0, 0)
    int64_t dst = 0;     ///< slot * target.slot_stride + dim * target.dim_stride
    int64_t slot = 0;    ///< slot of the first element
  };
  CacheTensor tensor = CacheTensor::kKey;  ///< K or V
  TileTarget target;                       ///< layout of the decoded tile
  /// True: runs walk slots (unit slot stride, one run per dim); false: runs walk dims (unit dim
  /// stride, one run per slot and dim group), or are single elements when no stride is 1.
  bool along_slots = false;
  int64_t length = 1;     ///< elements per run (block_size when along_slots)
  int64_t dst_step = 1;   ///< doubles between a run's consecutive elements in the target
  std::vector<Run> runs;  ///< every run of a full tile, in ascending offset order
  /// Elements from the tile's first to its last element, inclusive; the tile is prefetched as
  /// one range when this is at most twice the tile's element count.
  int64_t extent = 0;
  bool compact = false;  ///< extent <= 2 * block_size * head_size
};

/// The plan of `tensor`'s tiles under `cache`, decoded into `target` (built with key_at /
/// value_at).
TilePlan make_tile_plan(const PagedCacheLayout& cache, CacheTensor tensor, TileTarget target);

/// Decodes slots [first_slot, last_slot) of tile (block, head) into `dst` (laid out as
/// plan.target says), each value multiplied by `scale` when the cache is fp8 (the head's
/// scale; ignored otherwise). `buffer` is the tensor's buffer (the key buffer for both tensors
/// of a combined cache). Slots outside the range are never read.
void decode_tile(const PagedCacheLayout& cache, const TilePlan& plan, const std::byte* buffer,
                 int64_t block, int64_t head, int64_t first_slot, int64_t last_slot, double scale,
                 double* dst);

/// Asks the CPU to start loading tile (block, head): a cache hint, no value is read.
void prefetch_tile(const PagedCacheLayout& cache, const TilePlan& plan, const std::byte* buffer,
                   int64_t block, int64_t head);

/// True when float16 tiles are decoded with F16C on this CPU.
bool float16_uses_f16c();

}  // namespace pagecheck::ref::detail
