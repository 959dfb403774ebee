#pragma once
/// The generic planted attention row (issues 15 and 16): one query row and one query head of
/// paged attention over any page layout (generic strides), a 16/32-bit or fp8 cache with its
/// scales, multi-token queries, ALiBi, sinks, a sliding window and a soft-cap, in float32, with
/// a switch that plants one bug. Plain C++ that nvcc compiles for the planted kernel
/// (verify/planted/src/planted_features.cu, one thread per (row, head)) and the host compiler
/// for the CPU simulations of the same variants (verify/check/src/sim_planted_features.cpp), so
/// `pagecheck selftest --simulate` runs the kernel's own arithmetic. The order of operations is
/// docs/reference.md's: scale, soft-cap, ALiBi, window (and causal) mask, sink.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pagecheck/plugin.h"

#if defined(__CUDACC__)
#define PC_PLANTED_HD __host__ __device__
#else
#define PC_PLANTED_HD
#endif

namespace pagecheck::verify::planted {

/// The bug a generic planted variant plants (kNone: the correct control).
enum class RowBug : int {
  kNone = 0,
  kKScaleOnV,          ///< V dequantized with k_scale
  kScalesIgnored,      ///< fp8 codes used without their scales
  kScaleByQueryHead,   ///< per-head scales indexed by the query head (clamped to the array)
  kNhdStridesSwapped,  ///< cache addressed with the head and slot (token) strides exchanged
  kSinkInNumerator,    ///< the sink's weight also multiplies the first attended value
  kWindowOffByOne,     ///< the window attends t >= p - W (W + 1 tokens)
  kSoftCapAfterMax,    ///< soft-cap applied to l - m after the max subtraction
  kCausalLeak,         ///< new tokens attend every new token, later ones included
  kBakedBlockSize,     ///< the value loop addresses blocks of kBakedBlockSize slots
};

/// kBakedBlockSize: the block size hard-coded into the value loop.
inline constexpr int64_t kBakedBlockSize = 16;
/// Largest head size the row supports (the kernel's declared head sizes stay below).
inline constexpr int64_t kRowMaxHeadSize = 512;

/// What the row reads: the version-2 attention arguments flattened (device pointers in the
/// kernel, host pointers in the simulation).
struct RowArgs {
  pc_dtype dtype;               ///< query / output dtype (f32, f16, bf16)
  pc_dtype kv_dtype;            ///< cache dtype (may be fp8)
  pc_scale_kind scale_kind;     ///< fp8 scales: none, per tensor, per kv head
  const void* query;            ///< [num_query_tokens, num_heads, head_size]
  int64_t query_stride_token;   ///< elements between query rows
  int64_t query_stride_head;    ///< elements between query heads
  const void* key_cache;        ///< key tensor
  const void* value_cache;      ///< value tensor (value_base applied when combined)
  pc_cache_strides key;         ///< key strides
  pc_cache_strides value;       ///< value strides
  int64_t key_span;             ///< elements a correct access may read from key_cache
  int64_t value_span;           ///< elements a correct access may read from value_cache
  int64_t num_blocks;           ///< blocks in the pool
  int64_t num_kv_heads;         ///< key/value heads
  int64_t head_size;            ///< elements per head (<= kRowMaxHeadSize)
  int64_t block_size;           ///< slots per block
  int64_t num_heads;            ///< query heads
  int64_t num_seqs;             ///< sequences
  const int32_t* query_start;   ///< [num_seqs + 1] or NULL (one row per sequence)
  const int32_t* context_lens;  ///< [num_seqs]
  const int32_t* block_table;   ///< [num_seqs, block_table_stride]
  int64_t block_table_stride;   ///< elements between block-table rows
  const float* k_scale;         ///< fp8 key scales (1 or num_kv_heads) or NULL
  const float* v_scale;         ///< fp8 value scales or NULL
  const float* alibi_slopes;    ///< [num_heads] or NULL
  const float* sinks;           ///< [num_heads] or NULL
  int64_t window;               ///< 0 = none
  float soft_cap;               ///< 0 = none
  int32_t causal;               ///< non-zero: causal among the new tokens
  float scale;                  ///< logit scale
};

PC_PLANTED_HD inline float float_of_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/// 2^e as a float, e in [-126, 127].
PC_PLANTED_HD inline float pow2f(int e) {
  return float_of_bits(static_cast<uint32_t>(e + 127) << 23);
}

/// Exact decodings (every value of these formats is a float).
PC_PLANTED_HD inline float half_to_float(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.f : 1.f;
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return m == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * static_cast<float>(m) * pow2f(-24);
  return sign * static_cast<float>(1024 + m) * pow2f(e - 25);
}

PC_PLANTED_HD inline float fp8_to_float(uint8_t c, bool e4m3) {
  const float sign = (c & 0x80u) ? -1.f : 1.f;
  if (e4m3) {
    const int e = (c >> 3) & 0xf, m = c & 7;
    if (e == 15 && m == 7) return NAN;
    if (e == 0) return sign * static_cast<float>(m) * pow2f(-9);
    return sign * static_cast<float>(8 + m) * pow2f(e - 10);
  }
  const int e = (c >> 2) & 0x1f, m = c & 3;
  if (e == 31) return m == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * static_cast<float>(m) * pow2f(-16);
  return sign * static_cast<float>(4 + m) * pow2f(e - 17);
}

/// Element `i` of a buffer of `dtype`, as a float.
PC_PLANTED_HD inline float load_as_float(pc_dtype dtype, const void* base, int64_t i) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return static_cast<const float*>(base)[i];
    case PC_DTYPE_FLOAT16:
      return half_to_float(static_cast<const uint16_t*>(base)[i]);
    case PC_DTYPE_BFLOAT16:
      return float_of_bits(static_cast<uint32_t>(static_cast<const uint16_t*>(base)[i]) << 16);
    case PC_DTYPE_FP8_E4M3:
      return fp8_to_float(static_cast<const uint8_t*>(base)[i], true);
    case PC_DTYPE_FP8_E5M2:
      return fp8_to_float(static_cast<const uint8_t*>(base)[i], false);
  }
  return NAN;
}

/// Offset of (block, head, slot, dim) by the ABI's formula; `swap` exchanges the head and slot
/// strides (kNhdStridesSwapped).
PC_PLANTED_HD inline int64_t row_cache_offset(const pc_cache_strides& s, int64_t block,
                                              int64_t head, int64_t slot, int64_t dim, bool swap) {
  const int64_t head_stride = swap ? s.slot : s.head, slot_stride = swap ? s.head : s.slot;
  return block * s.block + head * head_stride + slot * slot_stride + (dim / s.dim_split) * s.group +
         (dim % s.dim_split) * s.dim;
}

/// Largest offset + 1 of a correct access to a tensor with strides `s` (all non-negative).
PC_PLANTED_HD inline int64_t row_tensor_span(const pc_cache_strides& s, int64_t num_blocks,
                                             int64_t num_kv_heads, int64_t block_size,
                                             int64_t head_size) {
  return 1 + (num_blocks - 1) * s.block + (num_kv_heads - 1) * s.head + (block_size - 1) * s.slot +
         (head_size / s.dim_split - 1) * s.group + (s.dim_split - 1) * s.dim;
}

/// Sets the cache geometry of `a` (host side): the strides `key` and `value`, the pool's sizes and
/// the spans of a correct access that follow from them.
inline void set_row_cache(RowArgs& a, const pc_cache_strides& key, const pc_cache_strides& value,
                          int64_t num_blocks, int64_t num_kv_heads, int64_t head_size,
                          int64_t block_size) {
  a.key = key;
  a.value = value;
  a.key_span = row_tensor_span(key, num_blocks, num_kv_heads, block_size, head_size);
  a.value_span = row_tensor_span(value, num_blocks, num_kv_heads, block_size, head_size);
  a.num_blocks = num_blocks;
  a.num_kv_heads = num_kv_heads;
  a.head_size = head_size;
  a.block_size = block_size;
}

/// The scale `index` of an fp8 cache (1 without scales).
PC_PLANTED_HD inline float row_scale(const RowArgs& a, const float* scales, int64_t index) {
  if (a.scale_kind == PC_SCALE_NONE || scales == nullptr) return 1.f;
  return scales[a.scale_kind == PC_SCALE_PER_KV_HEAD ? index : 0];
}

/// The sequence owning query row `row`.
PC_PLANTED_HD inline int64_t row_sequence(const RowArgs& a, int64_t row) {
  if (a.query_start == nullptr) return row;
  int64_t s = 0;
  while (s + 1 < a.num_seqs && a.query_start[s + 1] <= row) ++s;
  return s;
}

/// Offset of sequence `seq`'s token `t` (blocks of `bs` slots), kv head `kv`, dim 0 in a tensor
/// with strides `s`; -1 where a real kernel would read garbage (a block-table entry past the
/// table, a negative block).
PC_PLANTED_HD inline int64_t row_token_base(const RowArgs& a, const pc_cache_strides& s,
                                            int64_t seq, int64_t t, int64_t bs, int64_t kv,
                                            bool swap) {
  const int64_t entry = seq * a.block_table_stride + t / bs;
  if (entry >= a.num_seqs * a.block_table_stride) return -1;
  const int64_t block = a.block_table[entry];
  if (block < 0) return -1;
  return block * s.block + kv * (swap ? s.slot : s.head) + (t % bs) * (swap ? s.head : s.slot);
}

/// The dim part of an offset: (d / dim_split) * group + (d % dim_split) * dim.
PC_PLANTED_HD inline int64_t row_dim_offset(const pc_cache_strides& s, int64_t d) {
  const int32_t split = static_cast<int32_t>(s.dim_split), dim = static_cast<int32_t>(d);
  return (dim / split) * s.group + (dim % split) * s.dim;
}

/// One cache element, code times `scale` (float32); NaN for a token base of -1 or an offset
/// outside the tensor (where a real kernel reads garbage or faults).
PC_PLANTED_HD inline float row_element(const RowArgs& a, const void* base, int64_t span,
                                       int64_t token_base, int64_t dim_offset, float scale) {
  if (token_base < 0) return NAN;
  const int64_t offset = token_base + dim_offset;
  if (offset < 0 || offset >= span) return NAN;
  return load_as_float(a.kv_dtype, base, offset) * scale;
}

/// out[0, head_size) = attention of query row `row`, head `head`, in float32; `logits` holds at
/// least the row's context length floats (scratch). `out` holds the query while the logits are
/// computed, then the weighted value sums.
PC_PLANTED_HD inline void attend_row(const RowArgs& a, RowBug bug, int64_t row, int64_t head,
                                     float* logits, float* out) {
  const int64_t seq = row_sequence(a, row);
  const int64_t ctx = a.context_lens[seq];
  const int64_t first = a.query_start != nullptr ? a.query_start[seq] : seq;
  const int64_t q_len = a.query_start != nullptr ? a.query_start[seq + 1] - first : 1;
  const int64_t p = ctx - q_len + (row - first);  // the row's position
  int64_t hi = a.causal != 0 && bug != RowBug::kCausalLeak ? (p + 1 < ctx ? p + 1 : ctx) : ctx;
  int64_t lo = 0;
  if (a.window > 0) {
    lo = p - a.window + (bug == RowBug::kWindowOffByOne ? 0 : 1);
    if (lo < 0) lo = 0;
  }
  const int64_t hs = a.head_size;
  if (hi <= lo) {  // nothing attended (a context-0 row): zeros, the sink ignored
    for (int64_t d = 0; d < hs; ++d) out[d] = 0.f;
    return;
  }
  const int64_t kv = head / (a.num_heads / a.num_kv_heads);
  const bool swap = bug == RowBug::kNhdStridesSwapped;
  int64_t scale_index = kv;
  if (bug == RowBug::kScaleByQueryHead) {
    scale_index = head < a.num_kv_heads ? head : a.num_kv_heads - 1;  // a real kernel reads past
  }
  float k_scale = row_scale(a, a.k_scale, scale_index);
  float v_scale = row_scale(a, bug == RowBug::kKScaleOnV ? a.k_scale : a.v_scale, scale_index);
  if (bug == RowBug::kScalesIgnored) k_scale = v_scale = 1.f;
  const float cap = a.soft_cap;
  const bool cap_first = cap > 0.f && bug != RowBug::kSoftCapAfterMax;
  const bool cap_after = cap > 0.f && bug == RowBug::kSoftCapAfterMax;
  const float slope = a.alibi_slopes != nullptr ? a.alibi_slopes[head] : 0.f;
  const int64_t bs = a.block_size;

  // (1)-(4): logits of the attended positions, and their maximum (with the sink's).
  float* q = out;
  for (int64_t d = 0; d < hs; ++d) {
    q[d] = load_as_float(a.dtype, a.query,
                         row * a.query_stride_token + head * a.query_stride_head + d);
  }
  float m = -INFINITY;
  for (int64_t t = lo; t < hi; ++t) {
    const int64_t base = row_token_base(a, a.key, seq, t, bs, kv, swap);
    float dot = 0.f;
    for (int64_t d = 0; d < hs; ++d) {
      dot +=
          q[d] * row_element(a, a.key_cache, a.key_span, base, row_dim_offset(a.key, d), k_scale);
    }
    float x = a.scale * dot;
    if (cap_first) x = cap * tanhf(x / cap);
    if (a.alibi_slopes != nullptr) x += slope * static_cast<float>(t - p);
    logits[t - lo] = x;
    m = fmaxf(m, x);
  }
  const float sink = a.sinks != nullptr ? a.sinks[head] : 0.f;
  if (a.sinks != nullptr) m = fmaxf(m, sink);

  // (5): weights exp(l - m), the denominator with the sink's term.
  float sum = 0.f;
  for (int64_t t = lo; t < hi; ++t) {
    const float l = logits[t - lo];
    const float e = cap_after ? expf(cap * tanhf((l - m) / cap)) : expf(l - m);
    logits[t - lo] = e;
    sum += e;
  }
  float sink_weight = 0.f;
  if (a.sinks != nullptr) {
    sink_weight = cap_after ? expf(cap * tanhf((sink - m) / cap)) : expf(sink - m);
    sum += sink_weight;
  }

  // Weighted values, summed over t in order for each dim (the query is no longer needed).
  const int64_t value_bs = bug == RowBug::kBakedBlockSize ? kBakedBlockSize : bs;
  for (int64_t d = 0; d < hs; ++d) out[d] = 0.f;
  for (int64_t t = lo; t < hi; ++t) {
    const int64_t base = row_token_base(a, a.value, seq, t, value_bs, kv, swap);
    const float w = logits[t - lo];
    for (int64_t d = 0; d < hs; ++d) {
      out[d] += w * row_element(a, a.value_cache, a.value_span, base, row_dim_offset(a.value, d),
                                v_scale);
    }
  }
  if (bug == RowBug::kSinkInNumerator && a.sinks != nullptr) {
    const int64_t base = row_token_base(a, a.value, seq, lo, value_bs, kv, swap);
    for (int64_t d = 0; d < hs; ++d) {
      out[d] += sink_weight * row_element(a, a.value_cache, a.value_span, base,
                                          row_dim_offset(a.value, d), v_scale);
    }
  }
  for (int64_t d = 0; d < hs; ++d) out[d] /= sum;
}

}  // namespace pagecheck::verify::planted
