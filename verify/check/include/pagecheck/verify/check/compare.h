#pragma once
/// Comparisons of a kernel's outputs with the reference: copies bit for bit over whole buffers
/// (padding and untouched rows included; an fp8 conversion against the reference's rule), and
/// the rows of context-0 sequences of an attention output against what the variant declares
/// for them. The attention comparison itself lives in verify/tolerance
/// (attention_comparison.h), shared with the golden checks and the GPU tests.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::check {

/// Bit-exact comparison of output buffers.
struct CopyComparison {
  int64_t elements = 0;    ///< elements compared (whole buffers)
  int64_t mismatches = 0;  ///< elements whose bits differ
  std::string first;       ///< where and how the first mismatch differs
  bool passed() const { return mismatches == 0; }
  /// "all 1234 elements bit-identical" or "3 of 1234 elements differ; first: …".
  std::string describe() const;
};

/// Compares the kernel's buffers with the expected ones (the reference's result on the same
/// initial buffers). For gather, `first`/`second` are key/value in key_layout/value_layout (of
/// problem.dtype); for reshape_and_cache they are the key/value caches (of cache.dtype; a
/// combined cache is all in `first`, `second` empty).
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
/// "block 2, head 0, slot 3, dim 5" (or "padding") for element offset `off` of the key
/// buffer (`key_buffer`; of a combined cache "value block ..." where V lives) or the value
/// buffer.
std::string cache_position(const ref::PagedCacheLayout& cache, bool key_buffer, int64_t off);

/// True when some sequence of the batch has context 0 (a padding row).
bool has_context0_rows(const ref::PagedAttentionProblem& problem);
/// The output rows of context-0 sequences (densely packed `actual` [query rows, num_heads,
/// head_size]) against the variant's declaration: PC_CONTEXT0_UNTOUCHED: each element still
/// holds the output poison (DTypeInfo::output_poison_bits); PC_CONTEXT0_ZEROS: +0. A variant
/// that declares context 0 unsupported is never given such rows; here every element then
/// counts as a mismatch.
CopyComparison compare_context0_rows(const ref::PagedAttentionProblem& problem,
                                     pc_context0 declared, const std::vector<std::byte>& actual);
/// `actual` with the rows of context-0 sequences replaced by the reference's rows (those rows
/// are judged by compare_context0_rows; the tolerance comparison judges the others).
std::vector<std::byte> with_reference_context0_rows(const ref::PagedAttentionProblem& problem,
                                                    const ref::PagedAttentionResult& reference,
                                                    std::vector<std::byte> actual);

}  // namespace pagecheck::verify::check
