/// Bit-exact comparisons with located mismatches, and context-0 rows.
#include "pagecheck/verify/check/compare.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <optional>

namespace pagecheck::verify::check {
namespace {

uint32_t bits_at(const std::vector<std::byte>& buffer, int64_t index, std::size_t size) {
  uint32_t bits = 0;
  std::memcpy(&bits, buffer.data() + index * static_cast<int64_t>(size), size);
  return bits;
}

/// (block, head, slot, dim) of element `off` of one cache tensor, found by dividing by the
/// strides from the largest down (the layout's axes nest: validate() requires it); nothing when
/// `off` is padding. Checked against the layout's own accessor.
std::optional<std::array<int64_t, 4>> locate(const ref::PagedCacheLayout& c, bool key,
                                             int64_t off) {
  const ref::CacheTensorStrides& s = key ? c.key : c.value;
  const std::array<ref::CacheAxis, 5> axes = c.axes(s);  // block, head, slot, group, dim
  std::array<int, 5> order{0, 1, 2, 3, 4};
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return axes[a].stride > axes[b].stride; });
  std::array<int64_t, 5> at{};
  int64_t rem = off;
  for (int index : order) {
    const ref::CacheAxis& a = axes[index];
    if (a.size <= 1 || a.stride <= 0) continue;
    const int64_t i = rem / a.stride;
    if (i >= a.size) return std::nullopt;
    at[index] = i;
    rem -= i * a.stride;
  }
  if (rem != 0) return std::nullopt;
  const std::array<int64_t, 4> where{at[0], at[1], at[2], at[3] * s.dim_split + at[4]};
  const int64_t back = key ? c.key_at(where[0], where[1], where[2], where[3])
                           : c.value_at(where[0], where[1], where[2], where[3]) - c.value_base;
  if (back != off) return std::nullopt;
  return where;
}

std::string position_text(const std::array<int64_t, 4>& w) {
  return "block " + std::to_string(w[0]) + ", head " + std::to_string(w[1]) + ", slot " +
         std::to_string(w[2]) + ", dim " + std::to_string(w[3]);
}

/// The query rows [begin, end) of the context-0 sequences.
std::vector<std::pair<int64_t, int64_t>> context0_rows(const ref::PagedAttentionProblem& p) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t s = 0; s < p.batch.num_seqs; ++s) {
    if (p.batch.context_lens[s] != 0) continue;
    const int64_t begin = p.batch.query_begin(s);
    rows.emplace_back(begin, begin + p.batch.query_len(s));
  }
  return rows;
}

}  // namespace

std::string token_position(const ref::TokenLayout& l, int64_t off) {
  const int64_t token = off / l.stride_token, rem = off % l.stride_token;
  const int64_t head = rem / l.stride_head, dim = rem % l.stride_head;
  if (token >= l.num_tokens || head >= l.num_heads || dim >= l.head_size) return "padding";
  return "token " + std::to_string(token) + ", head " + std::to_string(head) + ", dim " +
         std::to_string(dim);
}

std::string cache_position(const ref::PagedCacheLayout& c, bool key_buffer, int64_t off) {
  if (key_buffer) {
    if (const auto w = locate(c, true, off)) return position_text(*w);
    if (c.combined && off >= c.value_base) {
      if (const auto w = locate(c, false, off - c.value_base)) return "value " + position_text(*w);
    }
    return "padding";
  }
  if (const auto w = locate(c, false, off)) return position_text(*w);
  return "padding";
}

void compare_bits(const char* name, DType dtype, const std::vector<std::byte>& expected,
                  const std::vector<std::byte>& actual,
                  const std::function<std::string(int64_t)>& where, CopyComparison& out,
                  const char* expected_label, const char* actual_label) {
  const std::size_t size = dtype_size(dtype);
  const int64_t count = static_cast<int64_t>(expected.size() / size);
  out.elements += count;
  if (expected.size() != actual.size()) {
    out.mismatches += count;
    if (out.first.empty()) {
      out.first = std::string(name) + ": kernel buffer holds " + std::to_string(actual.size()) +
                  " bytes, expected " + std::to_string(expected.size());
    }
    return;
  }
  constexpr int64_t kChunk = 1 << 16;  // skip equal chunks with memcmp (multi-GiB caches)
  for (int64_t begin = 0; begin < count; begin += kChunk) {
    const int64_t end = std::min(count, begin + kChunk);
    const std::size_t offset = static_cast<std::size_t>(begin) * size;
    if (std::memcmp(expected.data() + offset, actual.data() + offset,
                    static_cast<std::size_t>(end - begin) * size) == 0) {
      continue;
    }
    for (int64_t i = begin; i < end; ++i) {
      const uint32_t e = bits_at(expected, i, size), a = bits_at(actual, i, size);
      if (e == a) continue;
      if (out.mismatches++ == 0) {
        char text[200];
        std::snprintf(text, sizeof text, "%s bits 0x%0*x (%.9g) %s 0x%0*x (%.9g)", expected_label,
                      static_cast<int>(2 * size), e, load_element(dtype, expected.data(), i),
                      actual_label, static_cast<int>(2 * size), a,
                      load_element(dtype, actual.data(), i));
        out.first =
            std::string(name) + " element " + std::to_string(i) + " (" + where(i) + "): " + text;
      }
    }
  }
}

std::string CopyComparison::describe() const {
  if (passed()) return "all " + std::to_string(elements) + " elements bit-identical";
  return std::to_string(mismatches) + " of " + std::to_string(elements) +
         " elements differ; first: " + first;
}

CopyComparison compare_copy(const ref::CacheCopyProblem& expected, bool gather,
                            const std::vector<std::byte>& first,
                            const std::vector<std::byte>& second) {
  CopyComparison out;
  if (gather) {
    compare_bits(
        "key_out", expected.dtype, expected.key, first,
        [&](int64_t i) { return token_position(expected.key_layout, i); }, out);
    compare_bits(
        "value_out", expected.dtype, expected.value, second,
        [&](int64_t i) { return token_position(expected.value_layout, i); }, out);
  } else {
    const DType kv = expected.cache.dtype;
    compare_bits(
        "key_cache", kv, expected.key_cache, first,
        [&](int64_t i) { return cache_position(expected.cache, true, i); }, out);
    compare_bits(
        "value_cache", kv, expected.value_cache, second,
        [&](int64_t i) { return cache_position(expected.cache, false, i); }, out);
  }
  return out;
}

void to_json(nlohmann::json& j, const CopyComparison& c) {
  j = nlohmann::json{{"elements", c.elements}, {"mismatches", c.mismatches}, {"first", c.first}};
}

bool has_context0_rows(const ref::PagedAttentionProblem& p) {
  return std::find(p.batch.context_lens.begin(), p.batch.context_lens.end(), 0) !=
         p.batch.context_lens.end();
}

CopyComparison compare_context0_rows(const ref::PagedAttentionProblem& p, pc_context0 declared,
                                     const std::vector<std::byte>& actual) {
  CopyComparison out;
  const std::size_t size = dtype_size(p.dtype);
  const int64_t row = p.num_heads * p.head_size();
  const uint32_t want = declared == PC_CONTEXT0_UNTOUCHED ? dtype_info(p.dtype).output_poison_bits
                                                          : 0u;  // +0 (also when unsupported)
  const char* label =
      declared == PC_CONTEXT0_UNTOUCHED ? "declared untouched (output poison)" : "declared zeros";
  for (const auto& [begin, end] : context0_rows(p)) {
    for (int64_t i = begin * row; i < end * row; ++i) {
      ++out.elements;
      if (static_cast<std::size_t>((i + 1)) * size > actual.size()) {
        ++out.mismatches;
        continue;
      }
      const uint32_t got = bits_at(actual, i, size);
      if (got == want && declared != PC_CONTEXT0_UNSUPPORTED) continue;
      if (out.mismatches++ == 0) {
        char text[200];
        std::snprintf(text, sizeof text, "%s bits 0x%0*x, got 0x%0*x (%.9g)", label,
                      static_cast<int>(2 * size), want, static_cast<int>(2 * size), got,
                      load_element(p.dtype, actual.data(), i));
        out.first = "context-0 row " + std::to_string(i / row) + ", head " +
                    std::to_string(i % row / p.head_size()) + ", dim " +
                    std::to_string(i % p.head_size()) + ": " + text;
      }
    }
  }
  return out;
}

std::vector<std::byte> with_reference_context0_rows(const ref::PagedAttentionProblem& p,
                                                    const ref::PagedAttentionResult& reference,
                                                    std::vector<std::byte> actual) {
  const std::vector<std::byte> expected = reference.out_storage(p.dtype);
  if (expected.size() != actual.size()) return actual;  // the size mismatch is reported later
  const std::size_t row =
      static_cast<std::size_t>(p.num_heads * p.head_size()) * dtype_size(p.dtype);
  for (const auto& [begin, end] : context0_rows(p)) {
    std::memcpy(actual.data() + begin * row, expected.data() + begin * row, (end - begin) * row);
  }
  return actual;
}

}  // namespace pagecheck::verify::check
