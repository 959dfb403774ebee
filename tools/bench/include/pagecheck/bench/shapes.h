#pragma once
/// Benchmark shapes and the built-in sweeps of the bandwidth reports (issue 6).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::bench {

/// One benchmarked problem size. Copy families use num_tokens; paged attention uses num_seqs
/// and context_len (every sequence of the batch has the same context length).
struct BenchShape {
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  std::string label;              ///< unique within a sweep, e.g. "t4096", "mha_b8_c1024"
  std::string group;              ///< plot series group: "tokens", "mha" or "gqa"
  DType dtype = DType::kFloat16;  ///< storage dtype of every tensor
  int64_t num_tokens = 0;         ///< copy families: rows of contiguous K/V
  int64_t num_seqs = 0;           ///< attention: batch size
  int64_t context_len = 0;        ///< attention: tokens of context per sequence
  int64_t num_heads = 0;          ///< attention: query heads (copy families: = num_kv_heads)
  int64_t num_kv_heads = 0;       ///< key/value heads
  int64_t head_size = 0;          ///< elements per head
  int64_t block_size = 0;         ///< token slots per cache block
  int64_t num_blocks = 0;         ///< physical blocks in the cache pool
  ref::CacheKind cache_kind = ref::CacheKind::kXSplit;  ///< page layout (packed strides)
  /// Cache dtype when it differs from `dtype`: fp8 (E4M3 / E5M2) with a per-tensor scale of 1;
  /// empty: the cache holds `dtype`.
  std::optional<DType> kv_dtype;
  int64_t window = 0;     ///< attention: sliding window W (0 = none)
  int64_t query_len = 1;  ///< attention: query tokens per sequence (causal; 1 = decode)

  /// The cache's dtype: kv_dtype, else dtype.
  DType cache_dtype() const { return kv_dtype.value_or(dtype); }
  /// Cache blocks the problem's tokens occupy (attention: all sequences together).
  int64_t blocks_needed() const;
  /// Throws std::invalid_argument naming the shape and field when a size is not positive,
  /// num_heads is not a multiple of num_kv_heads, or the pool is too small.
  void validate() const;
};

/// Smallest pool the gather / reshape sweeps use (the "1024 blocks").
inline constexpr int64_t kCopyMinBlocks = 1024;
/// Smallest pool the attention sweeps draw blocks from: a realistic pool, larger than the
/// blocks a small batch needs, so block tables scatter over a large address range.
inline constexpr int64_t kAttentionMinBlocks = 4096;

/// Copy-family shape: num_tokens tokens, pool of max(kCopyMinBlocks, needed) blocks.
BenchShape copy_shape(pc_family family, int64_t num_tokens, int64_t num_kv_heads, int64_t head_size,
                      int64_t block_size, DType dtype);
/// Attention shape: pool of max(kAttentionMinBlocks, needed) blocks. `group` is "mha" when
/// num_heads == num_kv_heads, else "gqa".
BenchShape attention_shape(int64_t num_seqs, int64_t context_len, int64_t num_heads,
                           int64_t num_kv_heads, int64_t head_size, int64_t block_size,
                           DType dtype);

/// The label / group suffix of the shape's layout, KV dtype, window and query length: "" for
/// the x-split cache of `dtype`, decode, no window; else e.g. "_nhd", "_e4m3", "_hnd_e5m2",
/// "_w128", "_q4" in that order. Labels and groups are the base ("t4096", "gqa_b8_c4096";
/// "tokens", "gqa") plus this suffix.
std::string shape_suffix(const BenchShape& shape);
/// `shape` with the layout, KV dtype, window and query length set, and its label and group
/// suffixed (shape_suffix); validated.
BenchShape with_variation(BenchShape shape, ref::CacheKind kind, std::optional<DType> kv_dtype,
                          int64_t window = 0, int64_t query_len = 1);

/// The built-in sweep of a family (issue 6):
///  - gather_cached_kv / reshape_and_cache: num_tokens 64 .. 65536 (powers of two), 40 heads,
///    head size 128, block size 8;
///  - paged_attention: 40 heads, head size 128, block size 16, batch {1, 8, 32, 128, 256} x
///    context {128, 512, 1024, 2048, 4096}, then the same grid with 64 query / 8 KV heads;
/// then the layout and fp8 rows (issue 15): copies at 64 / 4096 / 65536 tokens on NHD and HND
/// pages and on E4M3 caches (x-split and NHD); attention (64 / 8 heads, context 4096, batch
/// 1 / 32 / 128) on NHD pages, E4M3 caches and both; windowed rows (W = 128 and 1024, batch 8 and
/// 32, context 16384) and multi-token rows (q_len 4, batch 8 and 32, context 4096). A row runs
/// only on variants that declare its layout, KV dtype, window and query length.
/// `quick` gives a few small shapes for smoke tests (one NHD E4M3 copy row). Every shape uses
/// `dtype` for its tokens.
std::vector<BenchShape> builtin_sweep(pc_family family, bool quick, DType dtype = DType::kFloat16);

/// The shapes of `sweep` named in the comma-separated `labels`, in the order given. Throws
/// std::invalid_argument naming an unknown label and listing the known ones.
std::vector<BenchShape> select_shapes(const std::vector<BenchShape>& sweep,
                                      const std::string& labels);

/// The shapes a bench run uses: `labels` (comma-separated, picked from the built-in and quick
/// sweeps together) when not empty, else the quick sweep when `quick`, else the built-in
/// sweep. `*sweep_name` receives "custom", "quick" or "default". Throws std::invalid_argument
/// naming an unknown label.
std::vector<BenchShape> sweep_for(pc_family family, bool quick, const std::string& labels,
                                  DType dtype, std::string* sweep_name);

/// One line describing the shape, e.g. "batch 8, context 1024, 40/40 heads, head 128,
/// block 16, float16" or "4096 tokens, 40 heads, head 128, block 8, float16".
std::string describe(const BenchShape& shape);

}  // namespace pagecheck::bench
