/// Readable descriptions of specs (counterexample blocks, one-line summaries).
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "pagecheck/registry.h"
#include "pagecheck/verify/gen/spec.h"

namespace pagecheck::verify::gen {
namespace {

/// "[1, 16, 17]", abbreviated to the first and last entries when long.
template <typename T>
std::string list_text(const std::vector<T>& values, std::size_t keep = 12) {
  std::ostringstream os;
  os << "[";
  const bool cut = values.size() > keep;
  const std::size_t head = cut ? keep - 4 : values.size();
  for (std::size_t i = 0; i < head; ++i) os << (i ? ", " : "") << values[i];
  if (cut) {
    os << ", ... (" << values.size() - keep << " more)";
    for (std::size_t i = values.size() - 4; i < values.size(); ++i) os << ", " << values[i];
  }
  os << "]";
  return os.str();
}

std::string pad_text(const TokenPadding& p) {
  if (!p.any()) return "packed";
  return "token +" + std::to_string(p.token) + " head +" + std::to_string(p.head);
}

std::string pad_text(const ref::TensorPadding& p) {
  return "block +" + std::to_string(p.block) + " head +" + std::to_string(p.head) + " slot +" +
         std::to_string(p.slot);
}

/// "packed", "K/V block +16 head +0 slot +0" or "key ..., value ..." and ", combined K/V".
std::string cache_pad_text(const CacheSpec& c) {
  std::string text = !c.pad.any() ? "packed"
                     : c.pad.shared()
                         ? "K/V " + pad_text(c.pad.key)
                         : "key " + pad_text(c.pad.key) + ", value " + pad_text(c.pad.value);
  return text + (c.combined ? ", combined K/V" : "");
}

/// " nhd kv=fp8_e4m3 per_kv_head k_scale=[...] v_scale=[...]": what differs from the default
/// cache (x-split, the token dtype, no scales); empty for the default.
std::string cache_text(const CacheSpec& c, DType dtype) {
  std::ostringstream os;
  if (c.kind != ref::CacheKind::kXSplit) os << " " << ref::cache_kind_name(c.kind);
  if (c.kv_dtype != dtype) os << " kv=" << dtype_name(c.kv_dtype);
  if (c.scale_kind != ref::ScaleKind::kNone) {
    os << " " << ref::scale_kind_name(c.scale_kind) << " k_scale=" << list_text(c.k_scale, 8)
       << " v_scale=" << list_text(c.v_scale, 8);
  }
  return os.str();
}

/// "q_len=[...] non-causal sinks=[...] window=W soft_cap=C": the features a case uses.
std::string feature_text(const AttentionSpec& s) {
  std::ostringstream os;
  if (!s.query_lens.empty()) os << " query_lens=" << list_text(s.query_lens);
  if (!s.causal) os << " non-causal";
  if (!s.sinks.empty()) os << " sinks=" << list_text(s.sinks, 8);
  if (s.window > 0) os << " window=" << s.window;
  if (s.soft_cap > 0) os << " soft_cap=" << s.soft_cap;
  return os.str();
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

std::string attention_text(const AttentionSpec& s) {
  std::ostringstream os;
  const char* kind = s.num_kv_heads == s.num_heads ? "MHA" : (s.num_kv_heads == 1 ? "MQA" : "GQA");
  os << "paged_attention " << dtype_name(s.dtype) << " head_size=" << s.head_size
     << " block_size=" << s.block_size << " scale=" << s.scale
     << " regime=" << regime_name(s.regime) << " content_seed=" << hex(s.content_seed) << "\n";
  os << "  num_seqs=" << s.num_seqs << " num_heads=" << s.num_heads
     << " num_kv_heads=" << s.num_kv_heads << " (" << kind << ")"
     << " alibi=" << (s.alibi ? "yes" : "no") << (is_large(s) ? " LARGE cache" : "") << "\n";
  os << "  context_lens=" << list_text(s.context_lens) << feature_text(s) << "\n";
  const std::string cache = cache_text(s.cache, s.dtype);
  if (!cache.empty()) os << "  cache:" << cache << "\n";
  std::set<int64_t> used;
  for (int64_t q = 0; q < s.num_seqs && q < static_cast<int64_t>(s.context_lens.size()); ++q) {
    const int64_t n = used_blocks(s, q);
    for (int64_t b = 0; b < n; ++b) used.insert(s.block_table[q * s.max_blocks_per_seq + b]);
  }
  os << "  block_table: max_blocks_per_seq=" << s.max_blocks_per_seq
     << " num_blocks=" << s.num_blocks << " (" << used.size() << " used, "
     << s.num_blocks - static_cast<int64_t>(used.size()) << " unused; '.' = past the last block)\n";
  if (s.table_pad > 0 || s.bound_pad > 0) {
    os << "  host arguments: block_table_stride=" << table_stride(s) << " (+" << s.table_pad
       << " poisoned entries per row) max_context_len=" << context_bound(s) << " (largest "
       << largest_context(s) << " +" << s.bound_pad << ")\n";
  }
  const int64_t rows_shown = std::min<int64_t>(s.num_seqs, 16);
  for (int64_t q = 0; q < rows_shown; ++q) {
    std::vector<std::string> row;
    for (int64_t b = 0; b < s.max_blocks_per_seq; ++b) {
      const int32_t e = s.block_table[q * s.max_blocks_per_seq + b];
      row.push_back(e < 0 ? "." : std::to_string(e));
    }
    os << "    seq " << q << ": " << list_text(row, 16) << "\n";
  }
  if (rows_shown < s.num_seqs) os << "    ... " << s.num_seqs - rows_shown << " more rows\n";
  os << "  strides: query " << pad_text(s.query_pad) << "; out " << pad_text(s.out_pad)
     << "; cache " << cache_pad_text(s.cache) << "\n";
  return os.str();
}

std::string copy_text(const CopySpec& s) {
  std::ostringstream os;
  os << family_name(s.family) << " " << dtype_name(s.dtype) << " head_size=" << s.head_size
     << " block_size=" << s.block_size << " num_kv_heads=" << s.num_kv_heads
     << " num_blocks=" << s.num_blocks << " regime=" << regime_name(s.regime)
     << " content_seed=" << hex(s.content_seed) << (is_large(s) ? " LARGE cache" : "")
     << (s.dequantize ? " dequantize" : "") << "\n";
  const std::string cache = cache_text(s.cache, s.dtype);
  if (!cache.empty()) os << "  cache:" << cache << "\n";
  os << "  num_tokens=" << s.slot_mapping.size()
     << " slot_mapping=" << list_text(s.slot_mapping, 24) << "\n";
  os << "  strides: key " << pad_text(s.key_pad) << "; value " << pad_text(s.value_pad)
     << "; cache " << cache_pad_text(s.cache) << "\n";
  return os.str();
}

}  // namespace

std::string describe(const CaseSpec& spec) {
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) return attention_text(*a);
  return copy_text(std::get<CopySpec>(spec));
}

std::string summary(const CaseSpec& spec) {
  std::ostringstream os;
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) {
    os << "paged_attention " << dtype_name(a->dtype) << " h" << a->head_size << " b"
       << a->block_size << " seqs " << a->num_seqs << " heads " << a->num_heads << "/"
       << a->num_kv_heads << " ctx " << list_text(a->context_lens, 8) << " "
       << regime_name(a->regime) << (a->alibi ? " alibi" : "") << (is_large(*a) ? " large" : "");
    if (a->table_pad > 0) os << " table_stride+" << a->table_pad;
    if (a->bound_pad > 0) os << " max_context_len+" << a->bound_pad;
    os << cache_text(a->cache, a->dtype) << (a->cache.combined ? " combined" : "")
       << feature_text(*a);
  } else {
    const auto& c = std::get<CopySpec>(spec);
    os << family_name(c.family) << " " << dtype_name(c.dtype) << " h" << c.head_size << " b"
       << c.block_size << " kv " << c.num_kv_heads << " tokens " << c.slot_mapping.size()
       << " blocks " << c.num_blocks << " " << regime_name(c.regime)
       << (is_large(c) ? " large" : "") << cache_text(c.cache, c.dtype)
       << (c.cache.combined ? " combined" : "") << (c.dequantize ? " dequantize" : "");
  }
  return os.str();
}

void showValue(const AttentionSpec& spec, std::ostream& os) {
  os << "\n" << attention_text(spec);
}
void showValue(const CopySpec& spec, std::ostream& os) {
  os << "\n" << copy_text(spec);
}
void showValue(const CaseSpec& spec, std::ostream& os) {
  os << "\n" << describe(spec);
}

}  // namespace pagecheck::verify::gen
