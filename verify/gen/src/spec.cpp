/// Spec basics: regime names, layouts derived from a spec, validation without contents.
#include "pagecheck/verify/gen/spec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "ceil_div.h"

namespace pagecheck::verify::gen {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("spec: " + what);
}

std::string str(int64_t v) {
  return std::to_string(v);
}

ref::PagedCacheLayout layout_of(const CacheSpec& c, int64_t num_blocks, int64_t num_kv_heads,
                                int64_t head_size, int64_t block_size) {
  return ref::make_cache_layout(c.kind, c.kv_dtype,
                                ref::CacheShape{num_blocks, num_kv_heads, head_size, block_size},
                                c.pad, c.combined, c.scale_kind);
}

ref::TokenLayout padded_tokens(int64_t num_tokens, int64_t num_heads, int64_t head_size,
                               const TokenPadding& pad) {
  ref::TokenLayout t = ref::TokenLayout::packed(num_tokens, num_heads, head_size);
  t.stride_head += pad.head;
  t.stride_token = num_heads * t.stride_head + pad.token;
  return t;
}

void require_nonnegative(const std::string& name, int64_t v) {
  if (v < 0) fail(name + " = " + str(v) + " must not be negative");
}

void check_padding(const char* name, const TokenPadding& p) {
  require_nonnegative(std::string(name) + ".token", p.token);
  require_nonnegative(std::string(name) + ".head", p.head);
}

void check_scales(const char* name, const std::vector<float>& scales, int64_t expected) {
  if (static_cast<int64_t>(scales.size()) != expected) {
    fail(std::string(name) + " has " + str(static_cast<int64_t>(scales.size())) +
         " entries, the scale kind needs " + str(expected));
  }
  for (std::size_t i = 0; i < scales.size(); ++i) {
    if (!(scales[i] > 0.0f) || !std::isfinite(scales[i])) {
      fail(std::string(name) + "[" + str(static_cast<int64_t>(i)) +
           "] = " + std::to_string(scales[i]) + " must be finite and positive");
    }
  }
}

/// The cache's own invariants for tokens of `dtype`: the KV dtype is the token dtype or fp8
/// (`raw_fp8` also allows tokens that are the fp8 codes themselves: a raw gather), fp8 caches
/// have scales of their kind, a combined cache pads K and V alike.
void check_cache(const CacheSpec& c, DType dtype, int64_t num_kv_heads, bool raw_fp8) {
  const DTypeInfo& kv = dtype_info(c.kv_dtype);
  if (c.kv_dtype != dtype && !kv.fp8) {
    fail(std::string("cache.kv_dtype = ") + kv.name + " differs from dtype = " + dtype_name(dtype) +
         " (only an fp8 cache may differ)");
  }
  if (!dtype_info(dtype).query_dtype && !(raw_fp8 && dtype == c.kv_dtype)) {
    fail(std::string("dtype = ") + dtype_name(dtype) + " is not a token dtype");
  }
  if (!kv.fp8 && c.scale_kind != ref::ScaleKind::kNone) {
    fail(std::string("cache.scale_kind = ") + ref::scale_kind_name(c.scale_kind) +
         " needs an fp8 kv_dtype, not " + kv.name);
  }
  if (kv.fp8 && c.scale_kind == ref::ScaleKind::kNone) {
    fail(std::string("cache.scale_kind = none with the fp8 kv_dtype ") + kv.name +
         " (an implied scale of 1 is per_tensor 1.0)");
  }
  const int64_t scales = ref::scale_count(c.scale_kind, num_kv_heads);
  check_scales("cache.k_scale", c.k_scale, scales);
  check_scales("cache.v_scale", c.v_scale, scales);
  if (c.combined && !c.pad.shared()) fail("cache.combined with K and V padded differently");
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
    case Regime::kFullRange:
      return "full_range";
  }
  return "unknown";
}

Regime parse_regime(std::string_view text) {
  for (Regime r : {Regime::kFlat, Regime::kPeaked, Regime::kMixed, Regime::kBits, Regime::kExtreme,
                   Regime::kFullRange}) {
    if (text == regime_name(r)) return r;
  }
  throw std::invalid_argument("unknown regime '" + std::string(text) +
                              "' (expected flat, peaked, mixed, bits, extreme or full_range)");
}

pc_family family_of(const CaseSpec& spec) {
  if (std::holds_alternative<AttentionSpec>(spec)) return PC_FAMILY_PAGED_ATTENTION;
  return std::get<CopySpec>(spec).family;
}

ref::PagedCacheLayout cache_layout(const AttentionSpec& s) {
  return layout_of(s.cache, s.num_blocks, s.num_kv_heads, s.head_size, s.block_size);
}

ref::PagedCacheLayout cache_layout(const CopySpec& s) {
  return layout_of(s.cache, s.num_blocks, s.num_kv_heads, s.head_size, s.block_size);
}

int64_t query_len(const AttentionSpec& s, int64_t seq) {
  return s.query_lens.empty() ? 1 : s.query_lens.at(seq);
}

int64_t query_tokens(const AttentionSpec& s) {
  if (s.query_lens.empty()) return s.num_seqs;
  int64_t rows = 0;
  for (int32_t n : s.query_lens) rows += n;
  return rows;
}

ref::TokenLayout query_layout(const AttentionSpec& s) {
  return padded_tokens(query_tokens(s), s.num_heads, s.head_size, s.query_pad);
}

ref::TokenLayout out_layout(const AttentionSpec& s) {
  return padded_tokens(query_tokens(s), s.num_heads, s.head_size, s.out_pad);
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
  return detail::ceil_div(spec.context_lens.at(seq), spec.block_size);
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
  require_nonnegative("window", s.window);
  require_nonnegative("extreme_partition", s.extreme_partition);
  if (!(s.soft_cap >= 0.0f) || !std::isfinite(s.soft_cap)) {
    fail("soft_cap = " + std::to_string(s.soft_cap) + " must be finite and not negative");
  }
  check_padding("query_pad", s.query_pad);
  check_padding("out_pad", s.out_pad);
  check_cache(s.cache, s.dtype, s.num_kv_heads, /*raw_fp8=*/false);
  cache_layout(s).validate();
  if (static_cast<int64_t>(s.context_lens.size()) != s.num_seqs) {
    fail("context_lens has " + str(static_cast<int64_t>(s.context_lens.size())) +
         " entries for num_seqs = " + str(s.num_seqs));
  }
  if (!s.query_lens.empty() && static_cast<int64_t>(s.query_lens.size()) != s.num_seqs) {
    fail("query_lens has " + str(static_cast<int64_t>(s.query_lens.size())) +
         " entries for num_seqs = " + str(s.num_seqs) + " (or none: decode)");
  }
  if (!s.sinks.empty() && static_cast<int64_t>(s.sinks.size()) != s.num_heads) {
    fail("sinks has " + str(static_cast<int64_t>(s.sinks.size())) +
         " entries for num_heads = " + str(s.num_heads));
  }
  for (std::size_t h = 0; h < s.sinks.size(); ++h) {
    if (!std::isfinite(s.sinks[h]))
      fail("sinks[" + str(static_cast<int64_t>(h)) + "] is not finite");
  }
  query_layout(s).validate("query");
  out_layout(s).validate("out");
  if (static_cast<int64_t>(s.block_table.size()) != s.num_seqs * s.max_blocks_per_seq) {
    fail("block_table has " + str(static_cast<int64_t>(s.block_table.size())) +
         " entries, expected num_seqs * max_blocks_per_seq");
  }
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    const int64_t len = s.context_lens[q];
    if (len < 0 || len > s.max_blocks_per_seq * s.block_size) {
      fail("context_lens[" + str(q) + "] = " + str(len) + " is outside [0, " +
           str(s.max_blocks_per_seq * s.block_size) + "]");
    }
    const int64_t rows = query_len(s, q);
    if (rows < 1 || (len > 0 && rows > len)) {
      fail("query_lens[" + str(q) + "] = " + str(rows) + " is outside [1, context_lens[" + str(q) +
           "] = " + str(len) + "]");
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
  const bool gather = s.family == PC_FAMILY_GATHER_CACHED_KV;
  check_cache(s.cache, s.dtype, s.num_kv_heads, /*raw_fp8=*/gather && !s.dequantize);
  if (s.dequantize &&
      (!gather || !dtype_info(s.cache.kv_dtype).fp8 || s.dtype == s.cache.kv_dtype)) {
    fail("dequantize needs a gather from an fp8 cache into a 16/32-bit dtype");
  }
  if (gather && !s.dequantize && s.dtype != s.cache.kv_dtype) {
    fail(std::string("a raw gather copies codes: dtype = ") + dtype_name(s.dtype) +
         " must equal cache.kv_dtype = " + dtype_name(s.cache.kv_dtype) + " (or dequantize)");
  }
  cache_layout(s).validate();
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
    if (slot >= 0 && !gather && !seen.insert(slot).second) {
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
