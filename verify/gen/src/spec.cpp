/// Spec basics: regime names, layouts derived from a spec, validation without contents.
#include "pagecheck/verify/gen/spec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace pagecheck::verify::gen {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("spec: " + what);
}

std::string str(int64_t v) {
  return std::to_string(v);
}

ref::PagedCacheLayout padded_cache(DType dtype, int64_t num_blocks, int64_t num_kv_heads,
                                   int64_t head_size, int64_t block_size, const CachePadding& pad) {
  ref::PagedCacheLayout c =
      ref::PagedCacheLayout::packed(dtype, num_blocks, num_kv_heads, head_size, block_size);
  c.key_stride_head += pad.key_head;
  c.key_stride_block = num_kv_heads * c.key_stride_head + pad.key_block;
  c.value_stride_head += pad.value_head;
  c.value_stride_block = num_kv_heads * c.value_stride_head + pad.value_block;
  return c;
}

ref::TokenLayout padded_tokens(int64_t num_tokens, int64_t num_heads, int64_t head_size,
                               const TokenPadding& pad) {
  ref::TokenLayout t = ref::TokenLayout::packed(num_tokens, num_heads, head_size);
  t.stride_head += pad.head;
  t.stride_token = num_heads * t.stride_head + pad.token;
  return t;
}

void require_nonnegative(const char* name, int64_t v) {
  if (v < 0) fail(std::string(name) + " = " + str(v) + " must not be negative");
}

void check_padding(const CachePadding& p) {
  require_nonnegative("cache_pad.key_block", p.key_block);
  require_nonnegative("cache_pad.key_head", p.key_head);
  require_nonnegative("cache_pad.value_block", p.value_block);
  require_nonnegative("cache_pad.value_head", p.value_head);
}

void check_padding(const char* name, const TokenPadding& p) {
  require_nonnegative((std::string(name) + ".token").c_str(), p.token);
  require_nonnegative((std::string(name) + ".head").c_str(), p.head);
}

}  // namespace

const char* regime_name(Regime regime) {
  switch (regime) {
    case Regime::kFlat:
      return "flat";
    case Regime::kPeaked:
      return "peaked";
    case Regime::kMixed:
      return "mixed";
    case Regime::kBits:
      return "bits";
    case Regime::kExtreme:
      return "extreme";
  }
  return "unknown";
}

Regime parse_regime(std::string_view text) {
  for (Regime r :
       {Regime::kFlat, Regime::kPeaked, Regime::kMixed, Regime::kBits, Regime::kExtreme}) {
    if (text == regime_name(r)) return r;
  }
  throw std::invalid_argument("unknown regime '" + std::string(text) +
                              "' (expected flat, peaked, mixed, bits or extreme)");
}

pc_family family_of(const CaseSpec& spec) {
  if (std::holds_alternative<AttentionSpec>(spec)) return PC_FAMILY_PAGED_ATTENTION;
  return std::get<CopySpec>(spec).family;
}

ref::PagedCacheLayout cache_layout(const AttentionSpec& s) {
  return padded_cache(s.dtype, s.num_blocks, s.num_kv_heads, s.head_size, s.block_size,
                      s.cache_pad);
}

ref::PagedCacheLayout cache_layout(const CopySpec& s) {
  return padded_cache(s.dtype, s.num_blocks, s.num_kv_heads, s.head_size, s.block_size,
                      s.cache_pad);
}

ref::TokenLayout query_layout(const AttentionSpec& s) {
  return padded_tokens(s.num_seqs, s.num_heads, s.head_size, s.query_pad);
}

ref::TokenLayout out_layout(const AttentionSpec& s) {
  return padded_tokens(s.num_seqs, s.num_heads, s.head_size, s.out_pad);
}

ref::TokenLayout key_layout(const CopySpec& s) {
  return padded_tokens(static_cast<int64_t>(s.slot_mapping.size()), s.num_kv_heads, s.head_size,
                       s.key_pad);
}

ref::TokenLayout value_layout(const CopySpec& s) {
  return padded_tokens(static_cast<int64_t>(s.slot_mapping.size()), s.num_kv_heads, s.head_size,
                       s.value_pad);
}

bool is_large(const CaseSpec& spec) {
  const ref::PagedCacheLayout c = std::visit([](const auto& s) { return cache_layout(s); }, spec);
  return c.key_span() > kLargeCacheElements || c.value_span() > kLargeCacheElements;
}

int64_t used_blocks(const AttentionSpec& spec, int64_t seq) {
  return (spec.context_lens.at(seq) + spec.block_size - 1) / spec.block_size;
}

int64_t largest_context(const AttentionSpec& spec) {
  int64_t longest = 0;
  for (int32_t len : spec.context_lens) longest = std::max<int64_t>(longest, len);
  return longest;
}

int64_t context_bound(const AttentionSpec& spec) {
  return largest_context(spec) + spec.bound_pad;
}

int64_t table_stride(const AttentionSpec& spec) {
  return spec.max_blocks_per_seq + spec.table_pad;
}

int64_t kv_row_vectors(DType dtype, int64_t num_kv_heads, int64_t head_size) {
  return num_kv_heads * head_size / dtype_x(dtype);
}

void validate(const AttentionSpec& s) {
  if (s.num_seqs <= 0) fail("num_seqs = " + str(s.num_seqs) + " must be positive");
  if (s.num_kv_heads <= 0) fail("num_kv_heads = " + str(s.num_kv_heads) + " must be positive");
  if (s.num_heads <= 0 || s.num_heads % s.num_kv_heads != 0) {
    fail("num_heads = " + str(s.num_heads) +
         " is not a positive multiple of num_kv_heads = " + str(s.num_kv_heads));
  }
  if (s.max_blocks_per_seq <= 0) fail("max_blocks_per_seq must be positive");
  require_nonnegative("table_pad", s.table_pad);
  require_nonnegative("bound_pad", s.bound_pad);
  check_padding("query_pad", s.query_pad);
  check_padding("out_pad", s.out_pad);
  check_padding(s.cache_pad);
  const ref::PagedCacheLayout cache = cache_layout(s);
  cache.validate(s.dtype);
  query_layout(s).validate("query");
  out_layout(s).validate("out");
  if (static_cast<int64_t>(s.context_lens.size()) != s.num_seqs) {
    fail("context_lens has " + str(static_cast<int64_t>(s.context_lens.size())) +
         " entries for num_seqs = " + str(s.num_seqs));
  }
  if (static_cast<int64_t>(s.block_table.size()) != s.num_seqs * s.max_blocks_per_seq) {
    fail("block_table has " + str(static_cast<int64_t>(s.block_table.size())) +
         " entries, expected num_seqs * max_blocks_per_seq");
  }
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t len = s.context_lens[q];
    if (len < 1 || len > s.max_blocks_per_seq * s.block_size) {
      fail("context_lens[" + str(q) + "] = " + str(len) + " is outside [1, " +
           str(s.max_blocks_per_seq * s.block_size) + "]");
    }
    const int64_t used = used_blocks(s, q);
    for (int64_t b = 0; b < s.max_blocks_per_seq; ++b) {
      const int64_t e = s.block_table[q * s.max_blocks_per_seq + b];
      const std::string where = "block_table[" + str(q) + "][" + str(b) + "] = " + str(e);
      if (b < used && (e < 0 || e >= s.num_blocks)) {
        fail(where + " is outside [0, num_blocks = " + str(s.num_blocks) + ")");
      }
      if (b >= used && e != -1) fail(where + " lies past the sequence's last block (expected -1)");
    }
  }
  const int64_t capacity = s.max_blocks_per_seq * s.block_size;
  if (context_bound(s) > capacity) {
    fail("bound_pad = " + str(s.bound_pad) + " puts max_context_len = " + str(context_bound(s)) +
         " above max_blocks_per_seq * block_size = " + str(capacity));
  }
  if (!(s.scale > 0.0f) || !std::isfinite(s.scale)) fail("scale must be positive and finite");
}

void validate(const CopySpec& s) {
  if (s.family != PC_FAMILY_GATHER_CACHED_KV && s.family != PC_FAMILY_RESHAPE_AND_CACHE) {
    fail("family must be gather_cached_kv or reshape_and_cache");
  }
  if (s.slot_mapping.empty()) fail("slot_mapping must hold at least one token");
  check_padding("key_pad", s.key_pad);
  check_padding("value_pad", s.value_pad);
  check_padding(s.cache_pad);
  cache_layout(s).validate(s.dtype);
  key_layout(s).validate("key");
  value_layout(s).validate("value");
  const int64_t num_slots = s.num_blocks * s.block_size;
  std::unordered_set<int64_t> seen;
  for (std::size_t t = 0; t < s.slot_mapping.size(); ++t) {
    const int64_t slot = s.slot_mapping[t];
    const std::string where = "slot_mapping[" + str(static_cast<int64_t>(t)) + "] = " + str(slot);
    if (slot < -1 || slot >= num_slots) {
      fail(where + " is outside [-1, " + str(num_slots) + ")");
    }
    if (slot >= 0 && s.family == PC_FAMILY_RESHAPE_AND_CACHE && !seen.insert(slot).second) {
      fail(where + " repeats a slot (reshape_and_cache writes would race)");
    }
  }
}

void validate(const CaseSpec& spec) {
  std::visit([](const auto& s) { validate(s); }, spec);
}

int64_t spec_size(const CaseSpec& spec) {
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) {
    int64_t tokens = 0;
    for (int32_t len : a->context_lens) tokens += len;
    return tokens * a->num_heads;
  }
  const auto& c = std::get<CopySpec>(spec);
  return static_cast<int64_t>(c.slot_mapping.size()) * c.num_kv_heads;
}

}  // namespace pagecheck::verify::gen
