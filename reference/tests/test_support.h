#pragma once
/// Local RapidCheck generators for the reference tests: they draw problem *shapes* (which
/// shrink) and a content seed (which does not), and build the problems with the self-check's
/// poisoned builders (NaN in every slot, block and padding element that must not be read).
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <vector>

#include "pagecheck/verify/selfcheck_problems.h"

// How RapidCheck prints counterexamples (found by argument-dependent lookup).
namespace pagecheck {
inline void showValue(DType dtype, std::ostream& os) {
  os << dtype_name(dtype);
}
namespace verify {
inline void showValue(const AttentionSpec& spec, std::ostream& os) {
  os << spec.describe() << " extra_blocks " << spec.extra_blocks << " extra_cols "
     << spec.extra_table_cols << " seed " << spec.seed;
}
inline void showValue(const CopySpec& spec, std::ostream& os) {
  os << spec.describe() << " seed " << spec.seed;
}
}  // namespace verify
}  // namespace pagecheck

namespace pagecheck::test {

/// Head sizes valid for an x-split cache of `dtype` (multiples of x = 16 / element size): the
/// serving set plus small ones.
inline rc::Gen<int64_t> gen_head_size(DType dtype) {
  std::vector<int64_t> sizes;
  for (int64_t size : {64, 80, 96, 112, 128, 192, 256, 4, 8, 12, 16, 20, 24, 32}) {
    if (size % dtype_x(dtype) == 0) sizes.push_back(size);
  }
  return rc::gen::elementOf(sizes);
}

/// One context length, weighted toward the block edges (1, block, block - 1, block + 1), with
/// an occasional long one and an occasional padding row (0).
inline rc::Gen<int32_t> gen_context_len(int64_t block_size) {
  const int32_t bs = static_cast<int32_t>(block_size);
  return rc::gen::weightedOneOf<int32_t>({
      {2, rc::gen::just<int32_t>(1)},
      {2, rc::gen::just<int32_t>(int32_t{bs})},
      {1, rc::gen::just<int32_t>(bs > 1 ? bs - 1 : 1)},
      {2, rc::gen::just<int32_t>(bs + 1)},
      {4, rc::gen::inRange<int32_t>(1, 4 * bs + 2)},
      {1, rc::gen::inRange<int32_t>(1, 40 * bs + 2)},  // long: many blocks
      {1, rc::gen::just<int32_t>(0)},                  // padding row
  });
}

/// The query length of a sequence with `context_len` tokens: mostly 1 (decode), otherwise
/// up to 16 new tokens (at most the context; up to 3 rows for a padding row).
inline rc::Gen<int32_t> gen_query_len(int32_t context_len) {
  const int32_t most = context_len == 0 ? 3 : std::min<int32_t>(context_len, 16);
  return rc::gen::weightedOneOf<int32_t>({
      {2, rc::gen::just<int32_t>(1)},
      {2, rc::gen::inRange<int32_t>(1, most + 1)},
      {1, rc::gen::just<int32_t>(int32_t{most})},
  });
}

/// A random attention problem shape with queries of `dtype`: cache kind (x-split, NHD, HND),
/// KV dtype (the query's, or fp8 with per-tensor or per-kv-head scales), combined K/V,
/// GQA/MQA, multi-token rows, padding rows, ALiBi, sinks, windows, soft-caps, non-causal rows,
/// padding, shared blocks, unused blocks and table columns, with a non-shrinking content seed.
inline rc::Gen<verify::AttentionSpec> gen_attention_spec(DType dtype) {
  return rc::gen::exec([dtype] {
    verify::AttentionSpec s;
    s.dtype = dtype;
    s.kind = *rc::gen::element(ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND);
    s.cache_dtype = *rc::gen::weightedOneOf<DType>({
        {3, rc::gen::just(dtype)},
        {1, rc::gen::just(DType::kFloat8E4M3)},
        {1, rc::gen::just(DType::kFloat8E5M2)},
    });
    if (dtype_info(s.kv_dtype()).fp8) {
      s.scale_kind = *rc::gen::element(ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead);
    }
    s.combined =
        *rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    s.head_size =
        *gen_head_size(s.kind == ref::CacheKind::kXSplit ? s.kv_dtype() : DType::kFloat32);
    s.block_size = *rc::gen::element<int64_t>(8, 16, 32, 1, 3, 5);
    s.num_kv_heads = *rc::gen::inRange<int64_t>(1, 4);
    s.num_heads = s.num_kv_heads * *rc::gen::element<int64_t>(1, 2, 4, 3);
    const int64_t num_seqs = *rc::gen::inRange<int64_t>(1, 5);
    s.context_lens =
        *rc::gen::container<std::vector<int32_t>>(num_seqs, gen_context_len(s.block_size));
    if (*rc::gen::arbitrary<bool>()) {
      for (int32_t ctx : s.context_lens) s.query_lens.push_back(*gen_query_len(ctx));
    }
    s.alibi = *rc::gen::arbitrary<bool>();
    s.sinks = *rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    s.window = *rc::gen::weightedOneOf<int64_t>({
        {3, rc::gen::just<int64_t>(0)},
        {1, rc::gen::inRange<int64_t>(1, 2 * s.block_size + 2)},
    });
    s.soft_cap = *rc::gen::weightedOneOf<float>({
        {3, rc::gen::just(0.0f)},
        {1, rc::gen::element(5.0f, 30.0f, 50.0f)},
    });
    s.causal = *rc::gen::weightedOneOf<bool>({{4, rc::gen::just(true)}, {1, rc::gen::just(false)}});
    s.share_prefix = *rc::gen::arbitrary<bool>();
    s.extra_blocks = *rc::gen::inRange<int64_t>(0, 4);
    s.extra_table_cols = *rc::gen::inRange<int64_t>(0, 3);
    s.query_pad = *rc::gen::element<int64_t>(0, 0, 1, 8);
    s.cache_pad = *rc::gen::element<int64_t>(0, 0, 1, 3);
    s.spread = *rc::gen::element(0.5, 1.0, 2.0, 3.0, 6.0);  // flat ... sharply peaked
    s.seed = *rc::gen::noShrink(rc::gen::arbitrary<uint64_t>());
    return s;
  });
}

/// A random cache-copy problem shape of `dtype` with a non-shrinking content seed.
inline rc::Gen<verify::CopySpec> gen_copy_spec(DType dtype) {
  return rc::gen::exec([dtype] {
    verify::CopySpec s;
    s.dtype = dtype;
    s.head_size = *gen_head_size(dtype);
    s.block_size = *rc::gen::element<int64_t>(8, 16, 32, 1, 3);
    s.num_kv_heads = *rc::gen::inRange<int64_t>(1, 5);
    s.num_blocks = *rc::gen::inRange<int64_t>(1, 6);
    s.num_tokens = *rc::gen::inRange<int64_t>(0, s.num_blocks * s.block_size + 1);
    s.skip_fraction = *rc::gen::element(0.0, 0.25, 0.5, 1.0);
    s.token_pad = *rc::gen::element<int64_t>(0, 0, 1, 8);
    s.cache_pad = *rc::gen::element<int64_t>(0, 0, 1, 3);
    s.seed = *rc::gen::noShrink(rc::gen::arbitrary<uint64_t>());
    return s;
  });
}

}  // namespace pagecheck::test
