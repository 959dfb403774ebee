#pragma once
/// The choices an attention case is built from (internal): how many sequences, each one's
/// context and query length, and the head shape. Each draw shrinks toward the simplest choice.
#include <cstdint>
#include <vector>

#include <rapidcheck.h>

namespace pagecheck::verify::gen::detail {

/// How much context a case may hold.
enum class ContextBudget {
  kOrdinary,  ///< up to a few split-K partitions
  kLarge,     ///< large-cache cases: a few blocks or partitions
  kTiny,      ///< wide-head cases: at most a few blocks
  kGrid,      ///< grid cases: mostly rows of 512-768 tokens (a few partitions each)
};

/// How one sequence's context length is chosen.
enum class ContextKind {
  kOne,         ///< 1
  kBlock,       ///< exactly one block
  kBlockMinus,  ///< a block - 1
  kBlockPlus,   ///< a block + 1
  kMultiBlock,  ///< k blocks, +-1
  kRandom,      ///< anything up to a few hundred
  kFullTable,   ///< every block-table column (a table at least as wide as a random length)
  kLong,        ///< several split-K partitions (the smallest declared size), often a partial last
  kSplitEdge,   ///< k * P - 1, k * P or k * P + 1 for a partition size P the variant declares
  kZero,        ///< 0: a padding row of the batch (only where the variant declares context 0)
};

/// How one sequence's query length is chosen (variants that take more than one query token).
enum class QueryKind {
  kOne,           ///< 1 (decode)
  kFew,           ///< 2 .. a few
  kMoreThanRest,  ///< more new tokens than cached ones (q > context - q)
  kWhole,         ///< the whole context is new (prefill)
  kLongest,       ///< the variant's (capped) largest query length
};

/// What the variant lets the sequences be (derived from its caps).
struct SeqLimits {
  int64_t block_size = 16;                          ///< slots per block
  ContextBudget budget = ContextBudget::kOrdinary;  ///< context sizes
  std::vector<int64_t> partitions;                  ///< split-K edge partition sizes (non-empty)
  int64_t max_query_len = 1;                        ///< largest query length (1: decode only)
  bool context0 = false;                            ///< context-0 rows allowed
};

/// One sequence as drawn: how its context length was chosen, the length, its query length,
/// and whether (and how much of) its leading full blocks it shares with an earlier sequence.
struct SeqDraw {
  ContextKind kind = ContextKind::kOne;  ///< how the length was chosen
  int64_t context_len = 1;               ///< the length (kFullTable: its least width)
  QueryKind query = QueryKind::kOne;     ///< how the query length is chosen
  int64_t query_pick = 0;                ///< kFew: 2 + query_pick mod the room left
  bool share = false;                    ///< shares leading blocks with an earlier sequence
  int64_t parent_pick = 0;               ///< that sequence: parent_pick mod this one's index
  int64_t share_pick = 0;                ///< shared blocks: 1 + share_pick * most / 1000
};

/// Query rows a query kind gives for a context of `context_len` (1 for a context of 0 other
/// than kFew / kLongest), capped at `cap` and the context.
int64_t query_length(const SeqDraw& draw, int64_t context_len, int64_t cap);
/// Largest query length a case draws for a variant declaring `max_query_len` (CPU budget).
int64_t query_cap(int64_t max_query_len);

/// One sequence's parameters, each shrinking on its own (toward context 1, one query token, no
/// sharing).
rc::Gen<SeqDraw> seq_draw(const SeqLimits& limits);
/// How many sequences a case has: 1 and primes weighted up.
rc::Gen<int64_t> seq_count(ContextBudget budget);
/// How many sequences a grid case has: enough for at least kGridKvPairs (sequence, kv head)
/// pairs with `num_kv_heads` kv heads, and up to a quarter more.
rc::Gen<int64_t> grid_seq_count(int64_t num_kv_heads);
/// (sequence, kv head) pairs of a grid case at the least: about one per SM of today's
/// data-centre GPUs (108-144 SMs), so that one block per pair fills a device.
inline constexpr int64_t kGridKvPairs = 128;
/// A grid case's long rows have at least this many tokens: two or more partitions of 256, the
/// common default.
inline constexpr int64_t kGridLongRow = 512;

/// Query and kv heads of a case.
struct HeadDraw {
  int64_t num_heads = 1;     ///< query heads
  int64_t num_kv_heads = 1;  ///< kv heads (divides num_heads)
};

/// Ordinary heads, growing with the size: MHA, GQA (groups 2..8) or MQA.
HeadDraw draw_ordinary_heads(int size, bool large);
/// Heads of served models (drawn by a case that is wide): up to 64 kv heads and 128 query
/// heads; MHA, groups 2..8, 16 and 32, not powers of two (3, 5, 6, 7); MQA with 64+ query
/// heads. Shrinks toward 2 kv heads in groups of 2.
HeadDraw draw_wide_heads();
/// Heads of a grid case: 4, 8 or 16 kv heads, groups of 1, 2 or 4.
HeadDraw draw_grid_heads();

}  // namespace pagecheck::verify::gen::detail
