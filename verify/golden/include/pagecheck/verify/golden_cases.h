#pragma once
/// The named golden cases and the deterministic generator of their inputs.
///
/// The catalogue in case_catalogue.cpp is the source of every golden: `pagecheck golden regen`
/// rebuilds fixtures/golden/<name>.h5 and MANIFEST.json from it, and `check` fails when a
/// committed file no longer matches its definition.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::golden {

/// Version of the input generator (draw order and value distributions). Bump it, and regenerate
/// with --force, whenever generate_*() changes what it draws.
inline constexpr int64_t kGeneratorVersion = 1;

/// Block-table entries past each sequence's last block hold this out-of-range index.
inline constexpr int32_t kBlockTablePoison = 2147483647;

/// One named golden case: everything needed to regenerate its inputs bit for bit.
struct CaseDefinition {
  std::string name;                              ///< file stem, e.g. "pa_gqa_f16_h128_b16"
  std::string description;                       ///< one line: what the case pins
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  DType dtype = DType::kFloat16;                 ///< storage dtype of every tensor
  uint64_t seed = 0;         ///< std::mt19937_64 seed of every random draw of the case
  int64_t head_size = 0;     ///< elements per head
  int64_t block_size = 0;    ///< token slots per cache block
  int64_t num_kv_heads = 0;  ///< key/value heads
  int64_t spare_blocks = 2;  ///< pool blocks nothing references (all NaN)
  int64_t padding = 0;       ///< elements added to every cache and token stride (0 = packed)

  // Paged attention only.
  int64_t num_heads = 0;              ///< query heads, a multiple of num_kv_heads
  std::vector<int32_t> context_lens;  ///< one per sequence (the batch)
  bool alibi = false;                 ///< with ALiBi slopes 2^(-8 (h+1) / num_heads)
  double query_amplitude = 4.0;       ///< query values are scaled by this: 1 flat, 16 peaked
  int64_t shared_prefix_blocks = 0;   ///< sequences 1.. reuse sequence 0's first N blocks
  int64_t extra_table_columns = 1;    ///< block-table columns past the longest sequence

  // Cache copies only.
  int64_t num_tokens = 0;          ///< rows of the contiguous key/value tensors
  int64_t num_skipped = 0;         ///< slot-mapping entries that are -1
  int64_t preexisting_tokens = 0;  ///< reshape_and_cache: cache slots holding older tokens
};

/// Every named case, in a fixed order.
const std::vector<CaseDefinition>& case_catalogue();
/// The case called `name`; throws std::invalid_argument listing the known names otherwise.
const CaseDefinition& find_case(const std::string& name);

/// Attention inputs of a case. Draw order (one std::mt19937_64 stream): the physical block
/// permutation (Fisher-Yates), the query [seq, head, dim], then the key cache and the value
/// cache, each over [physical block, used slot, kv head, dim]. Values are mixed-sign, magnitude
/// in [1/16, 1] (times query_amplitude for the query), never zero. Unused cache slots, unused
/// blocks and stride padding are NaN; block-table entries past each sequence are
/// kBlockTablePoison.
ref::PagedAttentionProblem generate_attention_problem(const CaseDefinition& def);

/// Copy inputs of a case. Draw order: distinct slots (partial Fisher-Yates over the pool), the
/// skipped positions, then for reshape_and_cache the preexisting slots, the cache contents
/// ([physical block, slot, kv head, dim], key then value), then the contiguous key and value
/// ([token, kv head, dim]). For gather the contiguous tensors are the outputs' initial contents
/// (rows with slot -1 must keep them). Unused slots and padding are NaN.
ref::CacheCopyProblem generate_copy_problem(const CaseDefinition& def);

/// Cache layout of a case (packed, or every stride widened by def.padding).
ref::PagedCacheLayout case_cache_layout(const CaseDefinition& def, int64_t num_blocks);
/// Token layout of a case (packed, or both strides widened by def.padding).
ref::TokenLayout case_token_layout(const CaseDefinition& def, int64_t num_tokens,
                                   int64_t num_heads);

}  // namespace pagecheck::verify::golden
