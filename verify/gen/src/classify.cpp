/// Edge-case tags of a spec.
#include "pagecheck/verify/gen/classify.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::gen {
namespace {

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

/// Partition sizes whose split-K edges the generator puts contexts at.
constexpr int64_t kEdgePartitions[] = {256, 512, 1024};

/// "kv_row>512" and "kv_row>1024": one token's keys over all kv heads span that many 16-byte
/// vectors (a kernel mapping them to the threads of one block runs out of threads).
void kv_row_tags(DType dtype, int64_t num_kv_heads, int64_t head_size,
                 std::set<std::string>& tags) {
  const int64_t vectors = kv_row_vectors(dtype, num_kv_heads, head_size);
  if (vectors > 512) tags.insert("kv_row>512");
  if (vectors > 1024) tags.insert("kv_row>1024");
}

std::vector<std::string> attention_tags(const AttentionSpec& s) {
  std::set<std::string> tags;
  const int64_t bs = s.block_size;
  for (int64_t partition : kEdgePartitions) {
    for (int32_t len : s.context_lens) {
      const int64_t k = (len + 1) / partition;  // len in {kP - 1, kP, kP + 1}, k >= 1
      if (k >= 1 && std::llabs(len - k * partition) <= 1) {
        tags.insert("split_edge@" + std::to_string(partition));
      }
    }
  }
  kv_row_tags(s.dtype, s.num_kv_heads, s.head_size, tags);
  const int64_t group = s.num_heads / s.num_kv_heads;
  if (group > 1 && !is_power_of_two(group)) tags.insert("group=npow2");
  if (group >= 16 && s.num_kv_heads > 1) tags.insert("group>=16");
  if (s.num_kv_heads == 1 && s.num_heads >= 64) tags.insert("mqa_heads>=64");
  if (s.num_heads >= 64) tags.insert("heads>=64");
  if (s.table_pad > 0) tags.insert("table_stride>width");
  if (s.bound_pad > 0) tags.insert("bound>max_ctx");
  if (s.regime == Regime::kExtreme) tags.insert("extreme_logits");
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t len = s.context_lens[q];
    if (len == 1) tags.insert("ctx=1");
    if (len == bs) tags.insert("ctx=block");
    if (len == bs - 1) tags.insert("ctx=block-1");
    if (len == bs + 1) tags.insert("ctx=block+1");
    if (len % bs != 0) tags.insert("partial_last_block");
    if (len == s.max_blocks_per_seq * bs) tags.insert("full_table");
    if (len > kPartitionSize) {
      tags.insert("multi_partition");
      if (len % kPartitionSize != 0) tags.insert("partial_last_partition");
    }
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
  if (s.out_pad.any()) tags.insert("strided_out");
  if (s.cache_pad.any()) tags.insert("padded_cache");
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
  if (s.cache_pad.any()) tags.insert("padded_cache");
  if (is_large(s)) tags.insert("large_cache");
  return {tags.begin(), tags.end()};
}

}  // namespace

std::vector<std::string> edge_tags(const CaseSpec& spec) {
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) return attention_tags(*a);
  return copy_tags(std::get<CopySpec>(spec));
}

std::vector<std::string> all_edge_tags(pc_family family) {
  if (family == PC_FAMILY_PAGED_ATTENTION) {
    return {"ctx=1",
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
            "strided_query",
            "strided_out",
            "padded_cache",
            "alibi",
            "large_cache",
            "split_edge@256",
            "split_edge@512",
            "split_edge@1024",
            "kv_row>512",
            "kv_row>1024",
            "group=npow2",
            "group>=16",
            "mqa_heads>=64",
            "heads>=64",
            "table_stride>width",
            "bound>max_ctx",
            "extreme_logits"};
  }
  std::vector<std::string> tags{
      "slot=-1",        "all_skipped",   "random_order",  "tokens=1",
      "tokens=prime",   "unused_blocks", "multi_block",   "last_slot_of_block",
      "strided_tokens", "padded_cache",  "large_cache",   "kv_row>512",
      "kv_row>1024",    "tokens>=1024",  "spread_blocks", "whole_block"};
  if (family == PC_FAMILY_GATHER_CACHED_KV) tags.push_back("repeated_slot");  // reads only
  return tags;
}

}  // namespace pagecheck::verify::gen
