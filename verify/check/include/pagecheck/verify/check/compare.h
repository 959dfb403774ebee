#pragma once
/// Comparisons of a kernel's outputs with the reference: copies bit for bit over whole buffers
/// (padding and untouched rows included). Attention comparisons live in verify/tolerance
/// (attention_comparison.h), shared with the golden checks and the GPU tests.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::check {

/// Bit-exact comparison of the output buffers of a copy kernel.
struct CopyComparison {
  int64_t elements = 0;    ///< elements compared (whole buffers)
  int64_t mismatches = 0;  ///< elements whose bits differ
  std::string first;       ///< where and how the first mismatch differs
  bool passed() const { return mismatches == 0; }
  /// "all 1234 elements bit-identical" or "3 of 1234 elements differ; first: …".
  std::string describe() const;
};

/// Compares the kernel's buffers with the expected ones (the reference's result on the same
/// initial buffers). For gather, `first`/`second` are key/value in key_layout/value_layout;
/// for reshape_and_cache they are the key/value caches.
CopyComparison compare_copy(const ref::CacheCopyProblem& expected, bool gather,
                            const std::vector<std::byte>& first,
                            const std::vector<std::byte>& second);

void to_json(nlohmann::json& j, const CopyComparison& c);

/// Compares two equally sized buffers of `dtype` elements bit for bit, adding their elements
/// and differing elements to `out`; the first difference becomes `out.first`:
/// "<name> element <i> (<where(i)>): <expected_label> bits 0x… (v) <actual_label> 0x… (v)".
void compare_bits(const char* name, DType dtype, const std::vector<std::byte>& expected,
                  const std::vector<std::byte>& actual,
                  const std::function<std::string(int64_t)>& where, CopyComparison& out,
                  const char* expected_label = "expected", const char* actual_label = "got");
/// "token 3, head 1, dim 7" (or "padding") for element offset `off` of a token tensor.
std::string token_position(const ref::TokenLayout& layout, int64_t off);
/// "block 2, head 0, dim 5, slot 3" (or "padding of block 2") for element offset `off` of the
/// key (`is_key`) or value cache.
std::string cache_position(const ref::PagedCacheLayout& cache, bool is_key, int64_t off);

}  // namespace pagecheck::verify::check
