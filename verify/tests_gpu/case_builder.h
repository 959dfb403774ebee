#pragma once
/// The GPU tests' fixed cases as gen specs, so they take the harness's one case stack (spec ->
/// gen::materialize -> problem; contents and poison are materialize's, layouts
/// ref::make_cache_layout's). A case is a name (the gtest parameter) and a spec, built from the
/// plain specs of spec_tables.h with a few knobs.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pagecheck/reference/layout.h"
#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/spec_tables.h"

namespace pagecheck::gpu_test {

namespace gen = verify::gen;

/// One paged-attention case.
struct AttentionCase {
  std::string name;         ///< gtest parameter name
  gen::AttentionSpec spec;  ///< the case
};

/// One KV-cache copy case; the same shape serves gather and reshape (for_family()).
struct CopyCase {
  std::string name;    ///< gtest parameter name
  gen::CopySpec spec;  ///< the case as a gather (family PC_FAMILY_GATHER_CACHED_KV)
};

std::ostream& operator<<(std::ostream& os, const AttentionCase& c);
std::ostream& operator<<(std::ostream& os, const CopyCase& c);

/// An attention case under construction: distinct physical blocks in a random order of the
/// seed, one block-table column past the longest sequence, 3 spare blocks, flat contents.
class Attention {
 public:
  Attention(std::string name, DType dtype, int64_t head, int64_t block, int64_t heads,
            int64_t kv_heads, std::vector<int32_t> context_lens, uint64_t seed);
  Attention& alibi();          ///< ALiBi slopes
  Attention& padded_cache();   ///< block / head / slot strides padded, K and V differently
  Attention& strided_query();  ///< query sliced from a fused QKV tensor, heads padded
  Attention& strided_out();    ///< output written into a padded buffer
  Attention& peaked();         ///< peaked regime: a few keys dominate each softmax
  Attention& shared_prefix();  ///< sequences 1.. reuse sequence 0's first block
  /// A pool of at least `blocks` blocks with the referenced ones at its end (large caches).
  Attention& high_blocks(int64_t blocks);
  operator AttentionCase() const;  // NOLINT: the case lists hold builders

 private:
  std::string name_;
  gen::AttentionSpec spec_;
  verify::golden::SequencePlacement placement_;
};

/// A copy case under construction: `tokens` distinct slots of a window of the pool (at least 64
/// slots, 4 per token), every `skip_every`-th token with slot -1, mixed contents.
class Copy {
 public:
  Copy(std::string name, DType dtype, int64_t head, int64_t block, int64_t kv_heads, int64_t tokens,
       int64_t blocks, int skip_every, uint64_t seed);
  Copy& padded_cache();       ///< cache strides padded as Attention::padded_cache
  Copy& strided_tokens();     ///< padded token rows and heads, key and value differently
  Copy& high_slots();         ///< the window at the end of the pool (large caches)
  Copy& bits();               ///< random bit patterns (NaN payloads must survive the copy)
  operator CopyCase() const;  // NOLINT: the case lists hold builders

 private:
  std::string name_;
  gen::CopySpec spec_;
  int64_t tokens_;
  int skip_every_;
  bool high_slots_ = false;
};

/// The copy spec of `c` for `family` (gather or reshape_and_cache).
gen::CopySpec for_family(const CopyCase& c, pc_family family);
/// The device output layout of an attention case (padded when the spec pads the output).
std::optional<ref::TokenLayout> device_out_layout(const gen::AttentionSpec& spec);

}  // namespace pagecheck::gpu_test
