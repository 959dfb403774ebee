/// Bit-exact copy comparison with located mismatches.
#include "pagecheck/verify/check/compare.h"

#include <cstdio>
#include <cstring>
#include <functional>

namespace pagecheck::verify::check {
namespace {

uint32_t bits_at(const std::vector<std::byte>& buffer, int64_t index, std::size_t size) {
  uint32_t bits = 0;
  std::memcpy(&bits, buffer.data() + index * static_cast<int64_t>(size), size);
  return bits;
}

}  // namespace

/// Logical position of an element offset inside a token tensor.
std::string token_position(const ref::TokenLayout& l, int64_t off) {
  const int64_t token = off / l.stride_token, rem = off % l.stride_token;
  const int64_t head = rem / l.stride_head, dim = rem % l.stride_head;
  if (token >= l.num_tokens || head >= l.num_heads || dim >= l.head_size) return "padding";
  return "token " + std::to_string(token) + ", head " + std::to_string(head) + ", dim " +
         std::to_string(dim);
}

/// Logical position of an element offset inside the key (is_key) or value cache.
std::string cache_position(const ref::PagedCacheLayout& c, bool is_key, int64_t off) {
  const int64_t block = off / (is_key ? c.key_stride_block : c.value_stride_block);
  int64_t rem = off % (is_key ? c.key_stride_block : c.value_stride_block);
  const int64_t head = rem / (is_key ? c.key_stride_head : c.value_stride_head);
  rem %= is_key ? c.key_stride_head : c.value_stride_head;
  int64_t dim = 0, slot = 0;
  bool padding = head >= c.num_kv_heads;
  if (is_key) {
    const int64_t group = rem / c.key_stride_group;
    rem %= c.key_stride_group;
    slot = rem / c.key_stride_slot;
    const int64_t e = rem % c.key_stride_slot;
    dim = group * c.x + e;
    padding = padding || group >= c.head_size / c.x || slot >= c.block_size || e >= c.x;
  } else {
    dim = rem / c.value_stride_dim;
    slot = rem % c.value_stride_dim;
    padding = padding || dim >= c.head_size || slot >= c.block_size;
  }
  if (block >= c.num_blocks || padding) return "padding of block " + std::to_string(block);
  return "block " + std::to_string(block) + ", head " + std::to_string(head) + ", dim " +
         std::to_string(dim) + ", slot " + std::to_string(slot);
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
    compare_bits(
        "key_cache", expected.dtype, expected.key_cache, first,
        [&](int64_t i) { return cache_position(expected.cache, true, i); }, out);
    compare_bits(
        "value_cache", expected.dtype, expected.value_cache, second,
        [&](int64_t i) { return cache_position(expected.cache, false, i); }, out);
  }
  return out;
}

void to_json(nlohmann::json& j, const CopyComparison& c) {
  j = nlohmann::json{{"elements", c.elements}, {"mismatches", c.mismatches}, {"first", c.first}};
}

}  // namespace pagecheck::verify::check
