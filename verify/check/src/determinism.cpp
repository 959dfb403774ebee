/// Comparing two runs of one case bit for bit (the determinism check).
#include "pagecheck/verify/check/determinism.h"

#include <cmath>

namespace pagecheck::verify::check {
namespace {

constexpr const char* kFirstRun = "run 1";
constexpr const char* kSecondRun = "run 2 bits";

}  // namespace

bool checks_determinism(double share, int64_t index) {
  if (!(share > 0)) return false;
  if (share >= 1) return true;
  // Case i is checked when floor((i + 1) * share) > floor(i * share): evenly spread.
  return std::floor(static_cast<double>(index + 1) * share) >
         std::floor(static_cast<double>(index) * share);
}

CopyComparison compare_attention_runs(const ref::PagedAttentionProblem& p,
                                      const std::vector<std::byte>& first,
                                      const std::vector<std::byte>& second) {
  CopyComparison out;
  const int64_t hs = p.head_size(), heads = p.num_heads;
  compare_bits(
      "out", p.dtype, first, second,
      [&](int64_t i) {
        return "query row " + std::to_string(i / (heads * hs)) + ", head " +
               std::to_string(i / hs % heads) + ", dim " + std::to_string(i % hs);
      },
      out, kFirstRun, kSecondRun);
  return out;
}

CopyComparison compare_copy_runs(const ref::CacheCopyProblem& p, bool gather, const CopyRun& first,
                                 const CopyRun& second) {
  CopyComparison out;
  if (gather) {
    compare_bits(
        "key_out", p.dtype, first.first, second.first,
        [&](int64_t i) { return token_position(p.key_layout, i); }, out, kFirstRun, kSecondRun);
    compare_bits(
        "value_out", p.dtype, first.second, second.second,
        [&](int64_t i) { return token_position(p.value_layout, i); }, out, kFirstRun, kSecondRun);
  } else {
    compare_bits(
        "key_cache", p.dtype, first.first, second.first,
        [&](int64_t i) { return cache_position(p.cache, true, i); }, out, kFirstRun, kSecondRun);
    compare_bits(
        "value_cache", p.dtype, first.second, second.second,
        [&](int64_t i) { return cache_position(p.cache, false, i); }, out, kFirstRun, kSecondRun);
  }
  return out;
}

std::string describe_runs(const CopyComparison& c) {
  if (c.passed()) {
    return "two runs on the same inputs bit-identical (" + std::to_string(c.elements) +
           " elements)";
  }
  return "outputs of two runs on the same inputs differ in " + std::to_string(c.mismatches) +
         " of " + std::to_string(c.elements) + " elements; first: " + c.first;
}

}  // namespace pagecheck::verify::check
