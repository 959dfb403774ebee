/// Edge-case tags of a spec.
#include "pagecheck/verify/gen/classify.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "attention_draws.h"
#include "feature_draws.h"
#include "gen_util.h"

namespace pagecheck::verify::gen {
namespace {

/// Elements of one copied tensor (tokens x kv heads x head size) from which a copy case is
/// large in volume (2^21: 4096 tokens of 4 kv heads of 128 dims).
constexpr int64_t kManyElements = int64_t{1} << 21;

bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

/// "kv_row>512" and "kv_row>1024": one token's keys over all kv heads span that many 16-byte
/// vectors (a kernel mapping them to the threads of one block runs out of threads).
void kv_row_tags(DType dtype, int64_t num_kv_heads, int64_t head_size,
                 std::set<std::string>& tags) {
  const int64_t vectors = kv_row_vectors(dtype, num_kv_heads, head_size);
  if (vectors > 512) tags.insert("kv_row>512");
  if (vectors > 1024) tags.insert("kv_row>1024");
}

/// The cache's tags: layout kind, KV dtype and scales, padding, combined K/V.
void cache_tags(const CacheSpec& c, std::set<std::string>& tags) {
  if (c.kind != ref::CacheKind::kXSplit)
    tags.insert(std::string("cache=") + ref::cache_kind_name(c.kind));
  if (dtype_info(c.kv_dtype).fp8) tags.insert(std::string("kv=") + dtype_name(c.kv_dtype));
  if (c.scale_kind != ref::ScaleKind::kNone) {
    tags.insert(std::string("scale=") + ref::scale_kind_name(c.scale_kind));
  }
  for (const std::vector<float>* scales : {&c.k_scale, &c.v_scale}) {
    if (scales->empty()) continue;
    const auto [lo, hi] = std::minmax_element(scales->begin(), scales->end());
    if (*lo < 1.0f) tags.insert("scale<1");
    if (*hi > 1.0f) tags.insert("scale>1");
    if (*hi >= 100.0f * *lo) tags.insert("scales_apart>=100");
  }
  if (c.pad.any()) {
    tags.insert("padded_cache");
    tags.insert(c.pad.shared() ? "pad_shared" : "pad_independent");
  }
  if (c.combined) tags.insert("combined_kv");
}

/// Multi-token queries, causality, sinks, window, soft-cap and context-0 rows.
void feature_tags(const AttentionSpec& s, std::set<std::string>& tags) {
  bool multi = false;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t ctx = s.context_lens[q], rows = query_len(s, q);
    if (ctx == 0) tags.insert("ctx=0");
    if (rows <= 1) continue;
    multi = true;
    if (ctx > 0 && rows > ctx - rows) tags.insert("q_len>rest");
    if (rows == ctx) tags.insert("q_len=ctx");
  }
  if (multi) tags.insert("q_len>1");
  if (multi && !s.causal) tags.insert("non_causal");
  if (!s.sinks.empty()) {
    tags.insert("sinks");
    const double far = detail::logit_bound(s.regime) + detail::kFarSink;
    for (float v : s.sinks) {
      if (v >= far) tags.insert("sinks_far_above");
      if (v <= -far) tags.insert("sinks_far_below");
    }
  }
  if (s.window > 0) {
    tags.insert("window");
    if (s.window == 1) tags.insert("window=1");
    if (s.window > largest_context(s)) tags.insert("window>ctx");
    for (int32_t ctx : s.context_lens) {
      if (ctx > 0 && s.window == ctx) tags.insert("window=ctx");
      if (ctx > s.window && (ctx - s.window) % s.block_size == 0) {
        tags.insert("window_block_edge");
      }
    }
  }
  if (s.soft_cap > 0) {
    tags.insert("soft_cap");
    if (s.soft_cap < detail::logit_spread(s.regime)) tags.insert("soft_cap<spread");
  }
}

std::vector<std::string> attention_tags(const AttentionSpec& s, const VariantCaps& caps) {
  std::set<std::string> tags;
  const int64_t bs = s.block_size;
  const std::vector<int64_t>& partitions = caps.edge_partitions();
  for (int64_t partition : partitions) {
    for (int32_t len : s.context_lens) {
      const int64_t k = (len + 1) / partition;  // len in {kP - 1, kP, kP + 1}, k >= 1
      if (k >= 1 && std::llabs(len - k * partition) <= 1) {
        tags.insert("split_edge@" + std::to_string(partition));
      }
    }
  }
  const int64_t partition = *std::min_element(partitions.begin(), partitions.end());
  kv_row_tags(s.cache.kv_dtype, s.num_kv_heads, s.head_size, tags);
  const int64_t group = s.num_heads / s.num_kv_heads;
  if (group > 1 && !is_power_of_two(group)) tags.insert("group=npow2");
  if (group >= 16 && s.num_kv_heads > 1) tags.insert("group>=16");
  if (s.num_kv_heads == 1 && s.num_heads >= 64) tags.insert("mqa_heads>=64");
  if (s.num_heads >= 64) tags.insert("heads>=64");
  // Grids that fill a GPU with long rows (grid cases, attention_draws.h): size-driven launch
  // rules (a split-K kernel's choice between one pass and partitions + merge, one block per
  // sequence and kv head) flip here, and small cases never reach them. 512 (sequence, head)
  // rows is where engines' one-pass / split-K switches sit (vLLM: num_seqs * num_heads > 512).
  const bool long_row = largest_context(s) >= detail::kGridLongRow;
  if (long_row && s.num_seqs * s.num_kv_heads >= detail::kGridKvPairs) {
    tags.insert("kv_pairs>=128@ctx>=512");
  }
  if (long_row && s.num_seqs * s.num_heads > 512) tags.insert("rows>512@ctx>=512");
  if (s.table_pad > 0) tags.insert("table_stride>width");
  if (s.bound_pad > 0) tags.insert("bound>max_ctx");
  if (s.regime == Regime::kExtreme) tags.insert("extreme_logits");
  if (s.regime == Regime::kFullRange) tags.insert("full_range");
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t len = s.context_lens[q];
    if (len == 0) continue;
    if (len == 1) tags.insert("ctx=1");
    if (len == bs) tags.insert("ctx=block");
    if (len == bs - 1) tags.insert("ctx=block-1");
    if (len == bs + 1) tags.insert("ctx=block+1");
    if (len % bs != 0) tags.insert("partial_last_block");
    if (len == s.max_blocks_per_seq * bs) tags.insert("full_table");
    if (len > partition) {
      tags.insert("multi_partition");
      if (len % partition != 0) tags.insert("partial_last_partition");
    }
  }
  // A split-K kernel adds the sink where it finishes a row: in its merge, or, when every row
  // fits one partition, in the partition pass itself (a path without the merge).
  if (!s.sinks.empty()) {
    tags.insert(tags.count("multi_partition") ? "sinks@multi_partition" : "sinks@one_partition");
  }
  if (s.num_kv_heads == s.num_heads) {
    tags.insert("mha");
  } else if (s.num_kv_heads == 1) {
    tags.insert("mqa");
  } else {
    tags.insert("gqa");
  }
  if (s.num_seqs == 1) tags.insert("seqs=1");
  if (is_prime(s.num_seqs)) tags.insert("seqs=prime");
  std::set<int32_t> used;
  bool shared = false, permuted = false;
  int32_t expected_next = 0;
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    for (int64_t b = 0; b < used_blocks(s, q); ++b) {
      const int32_t e = s.block_table[q * s.max_blocks_per_seq + b];
      if (!used.insert(e).second) {
        shared = true;
        continue;
      }
      if (e != expected_next) permuted = true;
      ++expected_next;
    }
  }
  if (shared) tags.insert("shared_blocks");
  if (permuted) tags.insert("permuted_table");
  if (static_cast<int64_t>(used.size()) < s.num_blocks) tags.insert("unused_blocks");
  if (s.max_blocks_per_seq > 1 && s.num_seqs > 1) tags.insert("table_rows>1");
  if (s.query_pad.any()) tags.insert("strided_query");
  if (s.query_pad.token > 0 && s.query_pad.head == 0) tags.insert("token_stride");
  if (s.query_pad.head > 0) tags.insert("head_stride");
  if (s.out_pad.any()) tags.insert("strided_out");
  cache_tags(s.cache, tags);
  feature_tags(s, tags);
  if (s.alibi) tags.insert("alibi");
  if (is_large(s)) tags.insert("large_cache");
  return {tags.begin(), tags.end()};
}

std::vector<std::string> copy_tags(const CopySpec& s) {
  std::set<std::string> tags;
  const int64_t n = static_cast<int64_t>(s.slot_mapping.size());
  int64_t skipped = 0;
  bool random_order = false, repeated = false;
  std::set<int64_t> seen, blocks;
  int64_t prev = -1;
  for (int64_t slot : s.slot_mapping) {
    if (slot < 0) {
      ++skipped;
      continue;
    }
    if (prev >= 0 && slot != prev + 1) random_order = true;
    prev = slot;
    if (!seen.insert(slot).second) repeated = true;
    blocks.insert(slot / s.block_size);
    if (slot % s.block_size == s.block_size - 1) tags.insert("last_slot_of_block");
  }
  if (skipped > 0) tags.insert("slot=-1");
  if (skipped == n) tags.insert("all_skipped");
  if (random_order) tags.insert("random_order");
  if (repeated) tags.insert("repeated_slot");
  if (n == 1) tags.insert("tokens=1");
  if (is_prime(n)) tags.insert("tokens=prime");
  if (static_cast<int64_t>(blocks.size()) < s.num_blocks) tags.insert("unused_blocks");
  if (blocks.size() > 1) tags.insert("multi_block");
  kv_row_tags(s.dtype, s.num_kv_heads, s.head_size, tags);
  if (n >= 1024) tags.insert("tokens>=1024");
  if (n * s.num_kv_heads * s.head_size >= kManyElements) tags.insert("kv_elements>=2^21");
  // Spread: at least 8 live tokens, each in a block of its own.
  const int64_t live = n - skipped;
  if (live >= 8 && static_cast<int64_t>(blocks.size()) == live &&
      static_cast<int64_t>(seen.size()) == live) {
    tags.insert("spread_blocks");
  }
  for (int64_t block : blocks) {  // every slot of some block
    int64_t slots = 0;
    for (int64_t o = 0; o < s.block_size; ++o) slots += seen.count(block * s.block_size + o);
    if (slots == s.block_size) {
      tags.insert("whole_block");
      break;
    }
  }
  if (s.key_pad.any() || s.value_pad.any()) tags.insert("strided_tokens");
  cache_tags(s.cache, tags);
  if (s.dequantize) tags.insert("dequantize");
  if (s.regime == Regime::kFullRange) tags.insert("full_range");
  if (is_large(s)) tags.insert("large_cache");
  return {tags.begin(), tags.end()};
}

/// The cache tags `caps` can reach.
void all_cache_tags(const VariantCaps& caps, std::vector<std::string>& tags) {
  if (caps.has(PC_CAP_CACHE_PAD_SHARED) || caps.has(PC_CAP_CACHE_PAD)) {
    tags.insert(tags.end(), {"padded_cache", "pad_shared"});
  }
  if (caps.has(PC_CAP_CACHE_PAD)) tags.push_back("pad_independent");
  if (caps.has(PC_CAP_COMBINED_KV)) tags.push_back("combined_kv");
  for (ref::CacheKind k : caps.cache_kinds) {
    if (k != ref::CacheKind::kXSplit)
      tags.push_back(std::string("cache=") + ref::cache_kind_name(k));
  }
  std::set<DType> fp8;  // the fp8 cache dtypes a case can reach
  for (DType d : caps.dtypes) {
    for (DType kv : detail::kv_options(caps, d)) {
      if (dtype_info(kv).fp8) fp8.insert(kv);
    }
  }
  for (DType kv : fp8) tags.push_back(std::string("kv=") + dtype_name(kv));
  if (fp8.empty()) return;
  const bool per_tensor =
      caps.scale_kinds.empty() ||
      std::count(caps.scale_kinds.begin(), caps.scale_kinds.end(), ref::ScaleKind::kPerTensor) > 0;
  const bool per_head =
      std::count(caps.scale_kinds.begin(), caps.scale_kinds.end(), ref::ScaleKind::kPerKvHead) > 0;
  if (per_tensor) tags.push_back("scale=per_tensor");
  if (per_head) tags.insert(tags.end(), {"scale=per_kv_head", "scales_apart>=100"});
  if (!caps.scale_kinds.empty()) tags.insert(tags.end(), {"scale<1", "scale>1"});
}

}  // namespace

std::vector<std::string> edge_tags(const CaseSpec& spec, const VariantCaps& caps) {
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) return attention_tags(*a, caps);
  return copy_tags(std::get<CopySpec>(spec));
}

std::vector<std::string> all_edge_tags(const VariantCaps& caps) {
  std::vector<std::string> tags;
  if (caps.family != PC_FAMILY_PAGED_ATTENTION) {
    tags = {"slot=-1",      "all_skipped",      "random_order", "tokens=1",
            "tokens=prime", "unused_blocks",    "multi_block",  "last_slot_of_block",
            "kv_row>512",   "kv_row>1024",      "tokens>=1024", "spread_blocks",
            "whole_block",  "kv_elements>=2^21"};
    if (caps.family == PC_FAMILY_GATHER_CACHED_KV) tags.push_back("repeated_slot");  // reads only
    const bool gather = caps.family == PC_FAMILY_GATHER_CACHED_KV;
    if (caps.has(gather ? PC_CAP_STRIDED_OUTPUT : PC_CAP_TOKEN_STRIDE) ||
        (!gather && caps.has(PC_CAP_HEAD_STRIDE))) {
      tags.push_back("strided_tokens");
    }
    all_cache_tags(caps, tags);
    const bool converts = std::any_of(caps.kv_dtypes.begin(), caps.kv_dtypes.end(), [&](DType kv) {
      return dtype_info(kv).fp8 && !detail::contains(caps.dtypes, kv);
    });
    if (gather && caps.has(PC_CAP_DEQUANTIZE) && converts) tags.push_back("dequantize");
    if (caps.has(PC_CAP_FULL_RANGE)) tags.push_back("full_range");
    if (caps.has(PC_CAP_LARGE_CACHE)) tags.push_back("large_cache");
    return tags;
  }
  tags = {"ctx=1",
          "ctx=block",
          "ctx=block-1",
          "ctx=block+1",
          "partial_last_block",
          "full_table",
          "multi_partition",
          "partial_last_partition",
          "mha",
          "gqa",
          "mqa",
          "seqs=1",
          "seqs=prime",
          "shared_blocks",
          "permuted_table",
          "unused_blocks",
          "table_rows>1",
          "kv_row>512",
          "kv_row>1024",
          "group=npow2",
          "group>=16",
          "mqa_heads>=64",
          "heads>=64",
          "table_stride>width",
          "bound>max_ctx",
          "extreme_logits",
          "kv_pairs>=128@ctx>=512",
          "rows>512@ctx>=512"};
  for (int64_t p : caps.edge_partitions()) tags.push_back("split_edge@" + std::to_string(p));
  if (caps.has(PC_CAP_TOKEN_STRIDE) || caps.has(PC_CAP_HEAD_STRIDE))
    tags.push_back("strided_query");
  if (caps.has(PC_CAP_TOKEN_STRIDE)) tags.push_back("token_stride");
  if (caps.has(PC_CAP_HEAD_STRIDE)) tags.push_back("head_stride");
  if (caps.has(PC_CAP_STRIDED_OUTPUT)) tags.push_back("strided_out");
  all_cache_tags(caps, tags);
  if (caps.max_query_len > 1) tags.insert(tags.end(), {"q_len>1", "q_len>rest", "q_len=ctx"});
  if (caps.max_query_len > 1 && caps.has(PC_CAP_NON_CAUSAL)) tags.push_back("non_causal");
  if (caps.has(PC_CAP_SINKS)) {
    tags.insert(tags.end(), {"sinks", "sinks_far_above", "sinks_far_below", "sinks@one_partition",
                             "sinks@multi_partition"});
  }
  if (caps.has(PC_CAP_WINDOW)) {
    tags.insert(tags.end(),
                {"window", "window=1", "window=ctx", "window>ctx", "window_block_edge"});
  }
  if (caps.has(PC_CAP_SOFT_CAP)) tags.insert(tags.end(), {"soft_cap", "soft_cap<spread"});
  if (caps.context0 != PC_CONTEXT0_UNSUPPORTED) tags.push_back("ctx=0");
  if (caps.has(PC_CAP_ALIBI)) tags.push_back("alibi");
  if (caps.has(PC_CAP_FULL_RANGE)) tags.push_back("full_range");
  if (caps.has(PC_CAP_LARGE_CACHE)) tags.push_back("large_cache");
  return tags;
}

}  // namespace pagecheck::verify::gen
