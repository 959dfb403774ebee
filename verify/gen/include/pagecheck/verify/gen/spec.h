#pragma once
/// A verification case as a small, shrinkable description (a "spec"): shapes, lengths, block
/// table, slot mapping, stride padding, content regime and content seed. Tensor contents are
/// not part of the spec; materialize() fills them deterministically from the seed.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::verify::gen {

/// Named content regimes (how tensor contents are drawn).
enum class Regime : int32_t {
  kFlat = 0,    ///< attention: small logits, near-uniform softmax; values mixed sign
  kPeaked = 1,  ///< attention: logit spread of several units, a few keys dominate
  kMixed = 2,   ///< mixed sign and magnitude (values over four decades)
  kBits = 3,    ///< copies: random bit patterns (NaN payloads, infinities, subnormals, -0)
  /// attention: logits of magnitude up to about 1e4 (whole blocks or split-K partitions 1e4
  /// below the maximum, or every logit near +-1e4); inputs finite, values ordinary
  kExtreme = 4,
  /// only where the variant declares PC_CAP_FULL_RANGE: values near the dtype's largest finite
  /// value, both signs, mixed with ordinary ones (copies: the tokens a reshape reads or the cache
  /// a gather reads, some exactly +-max, fp8 quotients at and beyond the saturation edge;
  /// attention: V near the KV dtype's largest finite value, peaked logits); inputs finite
  kFullRange = 5,
};
/// "flat", "peaked", "mixed", "bits", "extreme", "full_range".
const char* regime_name(Regime regime);
/// Inverse of regime_name; throws std::invalid_argument naming the text.
Regime parse_regime(std::string_view text);

/// Cache padding is the vocabulary's: ref::CachePadding (per tensor: block, head, slot).
using ref::CachePadding;

/// The cache of a case, as the one builder (ref::make_cache_layout) takes it: layout kind,
/// storage dtype of K and V, fp8 scales, K/V in one allocation, padding.
struct CacheSpec {
  ref::CacheKind kind = ref::CacheKind::kXSplit;  ///< page layout
  /// Storage dtype of K and V; equal to the case's dtype unless the cache is fp8.
  DType kv_dtype = DType::kFloat16;
  ref::ScaleKind scale_kind = ref::ScaleKind::kNone;  ///< fp8 scales
  std::vector<float> k_scale;  ///< 1 or num_kv_heads scales (empty for kNone)
  std::vector<float> v_scale;  ///< as k_scale, for V
  bool combined = false;       ///< K and V halves of one allocation
  CachePadding pad;            ///< stride padding (the same for K and V when combined)
};

/// Extra elements added to the packed strides of a [tokens, heads, head_size] tensor.
struct TokenPadding {
  int64_t token = 0;  ///< added to stride_token (e.g. the K and V parts of a fused QKV row)
  int64_t head = 0;   ///< added to stride_head
  bool any() const { return token || head; }
};

/// Block-table entry written past a sequence's last used block: outside the pool, so a kernel
/// that dereferences it faults (or reads poison).
constexpr int32_t kUnusedTableEntry = 0x7fffff00;

/// One paged-attention case: a ragged batch (one query token per sequence for decode, or
/// query_lens new tokens each) against the paged cache.
struct AttentionSpec {
  DType dtype = DType::kFloat16;      ///< storage dtype of query and output
  int64_t head_size = 64;             ///< elements per head
  int64_t block_size = 16;            ///< slots per block
  int64_t num_seqs = 1;               ///< sequences
  int64_t num_heads = 1;              ///< query heads
  int64_t num_kv_heads = 1;           ///< kv heads (divides num_heads)
  std::vector<int32_t> context_lens;  ///< [num_seqs], each >= 1 (0 only where declared)
  int64_t max_blocks_per_seq = 1;     ///< block-table columns
  int64_t num_blocks = 1;             ///< physical blocks in the pool
  /// [num_seqs * max_blocks_per_seq]; entries past a sequence's last block are -1 here and
  /// kUnusedTableEntry in the materialized problem.
  std::vector<int32_t> block_table;
  /// Extra block-table entries between the rows the kernel receives: its block_table_stride is
  /// max_blocks_per_seq + table_pad (the padding points at a poisoned block).
  int64_t table_pad = 0;
  /// The host-side max_context_len the kernel receives is the largest context + bound_pad (a
  /// bucketed bound, as engines pass it; at most max_blocks_per_seq * block_size).
  int64_t bound_pad = 0;
  float scale = 0.125f;  ///< logit scale
  bool alibi = false;    ///< ALiBi slopes 2^(-8(h+1)/num_heads)
  /// [num_seqs] new query tokens per sequence (each <= its context, or any length for a
  /// context of 0); empty = one per sequence (decode).
  std::vector<int32_t> query_lens;
  /// [num_heads] sink logits, or empty (no sinks); drawn values, not derived from the seed, so
  /// that a shrink can move them.
  std::vector<float> sinks;
  int64_t window = 0;             ///< sliding window W (0 = none)
  float soft_cap = 0.0f;          ///< logit soft-cap (0 = none)
  bool causal = true;             ///< causal among a sequence's new tokens
  TokenPadding query_pad;         ///< query strides (fused QKV: token pad = 2 * kv * head_size)
  TokenPadding out_pad;           ///< output strides on the device
  CacheSpec cache;                ///< cache kind, KV dtype, scales, padding
  Regime regime = Regime::kFlat;  ///< content regime
  /// Extreme regime: whole runs of this many tokens (a split-K partition size the variant
  /// declares) may sit 1e4 below the maximum; 0 = only whole blocks do.
  int64_t extreme_partition = 0;
  uint64_t content_seed = 1;  ///< seed of every tensor's contents
};

/// One KV-cache copy case (gather_cached_kv or reshape_and_cache).
struct CopySpec {
  pc_family family = PC_FAMILY_GATHER_CACHED_KV;  ///< gather or reshape_and_cache
  DType dtype = DType::kFloat16;                  ///< storage dtype of contiguous key / value
  int64_t head_size = 64;                         ///< elements per head
  int64_t block_size = 16;                        ///< slots per block
  int64_t num_kv_heads = 1;                       ///< kv heads
  int64_t num_blocks = 1;                         ///< physical blocks in the pool
  std::vector<int64_t> slot_mapping;  ///< [num_tokens] block * block_size + offset, or -1
  TokenPadding key_pad;               ///< contiguous key strides
  TokenPadding value_pad;             ///< contiguous value strides
  CacheSpec cache;                    ///< cache kind, KV dtype, scales, padding
  bool dequantize = false;            ///< gather from an fp8 cache into dtype values
  Regime regime = Regime::kMixed;     ///< content regime
  uint64_t content_seed = 1;          ///< seed of every tensor's contents
};

/// A case of any family.
using CaseSpec = std::variant<AttentionSpec, CopySpec>;

/// Family of a case.
pc_family family_of(const CaseSpec& spec);

/// Elements above which a cache counts as large (2^31: int32 offsets overflow).
constexpr int64_t kLargeCacheElements = int64_t{1} << 31;

/// Cache layout of a case: ref::make_cache_layout over the case's CacheSpec.
ref::PagedCacheLayout cache_layout(const AttentionSpec& spec);
ref::PagedCacheLayout cache_layout(const CopySpec& spec);
/// Query rows of the case: the sum of query_lens (num_seqs when empty).
int64_t query_tokens(const AttentionSpec& spec);
/// New query tokens of sequence `seq` (1 when query_lens is empty).
int64_t query_len(const AttentionSpec& spec, int64_t seq);
/// Query layout [query_tokens, num_heads, head_size] with padding.
ref::TokenLayout query_layout(const AttentionSpec& spec);
/// Output layout on the device [query_tokens, num_heads, head_size] with padding.
ref::TokenLayout out_layout(const AttentionSpec& spec);
/// Contiguous key / value layouts of a copy case.
ref::TokenLayout key_layout(const CopySpec& spec);
ref::TokenLayout value_layout(const CopySpec& spec);

/// True when the key or value cache spans more than kLargeCacheElements elements.
bool is_large(const CaseSpec& spec);
/// Number of blocks sequence `seq` uses: ceil(context_lens[seq] / block_size).
int64_t used_blocks(const AttentionSpec& spec, int64_t seq);
/// Largest context length of the batch.
int64_t largest_context(const AttentionSpec& spec);
/// The max_context_len the kernel receives: largest_context + bound_pad.
int64_t context_bound(const AttentionSpec& spec);
/// Entries between block-table rows on the device: max_blocks_per_seq + table_pad.
int64_t table_stride(const AttentionSpec& spec);
/// 16-byte vectors of one token's keys over all kv heads: num_kv_heads * head_size / x (the
/// per-token work a copy or attention kernel may map to threads of one block).
int64_t kv_row_vectors(DType dtype, int64_t num_kv_heads, int64_t head_size);

/// Throws std::invalid_argument naming the field when the spec is inconsistent (the checks
/// of ref validate() that do not need tensor contents, plus the spec's own invariants: -1
/// past each sequence's last block, distinct reshape slots).
void validate(const AttentionSpec& spec);
void validate(const CopySpec& spec);
void validate(const CaseSpec& spec);

/// Multi-line readable description: shapes, lengths, the block table or slot mapping,
/// strides, regime and seed. Long tables are abbreviated.
std::string describe(const CaseSpec& spec);
/// One-line summary: "paged_attention float16 h128 b16 seqs 3 heads 8/2 ctx [1,16,17] ...".
std::string summary(const CaseSpec& spec);
/// A size measure for reports: total tokens * heads (attention) or tokens * kv heads (copies).
int64_t spec_size(const CaseSpec& spec);

/// JSON (de)serialization (nlohmann ADL hooks). from_json throws nlohmann::json::exception or
/// std::invalid_argument on a malformed document.
void to_json(nlohmann::json& j, const AttentionSpec& spec);
void from_json(const nlohmann::json& j, AttentionSpec& spec);
void to_json(nlohmann::json& j, const CopySpec& spec);
void from_json(const nlohmann::json& j, CopySpec& spec);
/// {"family": ..., ...fields}: family tells which spec it is.
nlohmann::json spec_to_json(const CaseSpec& spec);
/// Inverse of spec_to_json; throws std::invalid_argument naming the missing or bad field.
CaseSpec spec_from_json(const nlohmann::json& j);

/// RapidCheck's showValue hooks (counterexamples print the readable description).
void showValue(const AttentionSpec& spec, std::ostream& os);
void showValue(const CopySpec& spec, std::ostream& os);
void showValue(const CaseSpec& spec, std::ostream& os);

}  // namespace pagecheck::verify::gen
