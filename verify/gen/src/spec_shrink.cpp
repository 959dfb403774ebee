/// Shrinks of a spec itself (the second shrinking pass; see spec_shrink.h).
#include "pagecheck/verify/gen/spec_shrink.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace pagecheck::verify::gen {
namespace {

AttentionSpec without_sequence(AttentionSpec s, int64_t q) {
  s.context_lens.erase(s.context_lens.begin() + q);
  if (!s.query_lens.empty()) s.query_lens.erase(s.query_lens.begin() + q);
  const auto row = s.block_table.begin() + q * s.max_blocks_per_seq;
  s.block_table.erase(row, row + s.max_blocks_per_seq);
  --s.num_seqs;
  return s;
}

/// The table cut to `width` columns (at least every sequence's used blocks).
AttentionSpec with_table_width(const AttentionSpec& s, int64_t width) {
  AttentionSpec out = s;
  out.max_blocks_per_seq = width;
  out.bound_pad = std::min(s.bound_pad, width * s.block_size - largest_context(s));
  out.block_table.assign(s.num_seqs * width, -1);
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    std::copy_n(s.block_table.begin() + q * s.max_blocks_per_seq, width,
                out.block_table.begin() + q * width);
  }
  return out;
}

/// Referenced blocks renumbered 0, 1, ... in order of first use, the others dropped (but one,
/// when table rows are padded); false when that changes nothing.
bool compact_pool(AttentionSpec& s) {
  std::map<int32_t, int32_t> renumber;
  for (int32_t& e : s.block_table) {
    if (e < 0) continue;
    const auto it = renumber.emplace(e, static_cast<int32_t>(renumber.size())).first;
    e = it->second;
  }
  // Padded table rows keep one unread (poisoned) block to point at.
  const int64_t blocks = static_cast<int64_t>(renumber.size()) + (s.table_pad > 0 ? 1 : 0);
  bool identity = blocks == s.num_blocks;
  for (const auto& [from, to] : renumber) identity = identity && from == to;
  s.num_blocks = std::max<int64_t>(1, blocks);
  return !identity;
}

/// Sequence q's context shortened to `len` (its query to at most `len` tokens, its table row
/// cut to match).
AttentionSpec with_context(AttentionSpec s, int64_t q, int32_t len) {
  s.context_lens[q] = len;
  if (!s.query_lens.empty()) s.query_lens[q] = std::min(s.query_lens[q], len);
  for (int64_t b = used_blocks(s, q); b < s.max_blocks_per_seq; ++b) {
    s.block_table[q * s.max_blocks_per_seq + b] = -1;
  }
  return s;
}

std::vector<AttentionSpec> attention_shrinks(const AttentionSpec& s) {
  std::vector<AttentionSpec> out;
  for (int64_t q = 0; s.num_seqs > 1 && q < s.num_seqs; ++q) out.push_back(without_sequence(s, q));
  int64_t needed = 1;
  for (int64_t q = 0; q < s.num_seqs; ++q) needed = std::max(needed, used_blocks(s, q));
  if (needed < s.max_blocks_per_seq) out.push_back(with_table_width(s, needed));
  // A large cache is the point of a large case: its pool stays.
  AttentionSpec compact = s;
  if (!is_large(s) && compact_pool(compact)) out.push_back(compact);
  if (s.table_pad > 0 || s.bound_pad > 0) {  // the kernel's plain table and exact bound
    AttentionSpec plain = s;
    plain.table_pad = 0;
    plain.bound_pad = 0;
    out.push_back(plain);
  }
  // Features off: plain decode queries, no sinks, window or soft-cap, causal.
  if (!s.query_lens.empty()) {
    AttentionSpec decode = s;
    decode.query_lens.clear();
    out.push_back(decode);
  }
  const auto without = [&](auto edit) {
    AttentionSpec plain = s;
    edit(plain);
    out.push_back(plain);
  };
  if (!s.sinks.empty()) without([](AttentionSpec& c) { c.sinks.clear(); });
  if (s.window > 0) without([](AttentionSpec& c) { c.window = 0; });
  if (s.soft_cap > 0) without([](AttentionSpec& c) { c.soft_cap = 0; });
  if (!s.causal) without([](AttentionSpec& c) { c.causal = true; });
  for (int64_t q = 0; q < s.num_seqs; ++q) {
    if (s.context_lens[q] == 0) continue;  // a padding row: removed, never lengthened
    rc::Seq<int32_t> shorter = rc::shrink::towards<int32_t>(s.context_lens[q], 1);
    while (const rc::Maybe<int32_t> len = shorter.next()) out.push_back(with_context(s, q, *len));
  }
  for (int64_t q = 0; q < static_cast<int64_t>(s.query_lens.size()); ++q) {
    rc::Seq<int32_t> fewer = rc::shrink::towards<int32_t>(s.query_lens[q], 1);
    while (const rc::Maybe<int32_t> n = fewer.next()) {
      AttentionSpec c = s;
      c.query_lens[q] = *n;
      out.push_back(c);
    }
  }
  return out;
}

std::vector<CopySpec> copy_shrinks(const CopySpec& s) {
  std::vector<CopySpec> out;
  for (std::size_t t = 0; s.slot_mapping.size() > 1 && t < s.slot_mapping.size(); ++t) {
    CopySpec c = s;
    c.slot_mapping.erase(c.slot_mapping.begin() + static_cast<std::ptrdiff_t>(t));
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<CaseSpec> spec_shrinks(const CaseSpec& spec) {
  std::vector<CaseSpec> out;
  const auto keep_valid = [&out](const auto& candidates) {
    for (const auto& c : candidates) {
      try {
        validate(c);
        out.emplace_back(c);
      } catch (const std::invalid_argument&) {
        // not a valid case: not a shrink
      }
    }
  };
  if (const auto* a = std::get_if<AttentionSpec>(&spec)) {
    keep_valid(attention_shrinks(*a));
  } else {
    keep_valid(copy_shrinks(std::get<CopySpec>(spec)));
  }
  return out;
}

rc::Shrinkable<CaseSpec> shrinkable_spec(const CaseSpec& spec) {
  return rc::shrinkable::shrinkRecur(
      spec, [](const CaseSpec& s) { return rc::seq::fromContainer(spec_shrinks(s)); });
}

}  // namespace pagecheck::verify::gen
