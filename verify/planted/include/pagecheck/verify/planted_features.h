#pragma once
/// Declarations of the generic planted variants of issues 15 and 16 (layouts, fp8 KV caches with
/// scales, sinks, window, soft-cap, multi-token queries): one table read by the planted
/// registration (verify/planted/src/planted_register_features.cpp, as pc_variant fields) and by
/// the CPU simulations of the same classes (verify/check/src/sim_planted_features.cpp, as
/// gen::VariantCaps), so both declare the same edges. Each bug declares what it needs, so the
/// default verification draws the edge that exposes it in most cases.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pagecheck/plugin.h"
#include "pagecheck/verify/planted_row.h"

namespace pagecheck::verify::planted {

/// What a generic copy variant plants.
enum class CopyBug : int {
  kNone = 0,
  kNoSaturation,  ///< quantization overflow gives NaN (e4m3) / infinity (e5m2), not saturation
};

/// What the shrunk counterexample of a bug must still show (the edge that exposes it);
/// `pagecheck selftest` checks it.
enum class Edge : int {
  kNone = 0,    ///< a control, or no check
  kFp8,         ///< an fp8 KV cache
  kFp8Gqa,      ///< an fp8 KV cache with per-kv-head scales under GQA
  kNhdHeads,    ///< an NHD cache with more than one kv head
  kSinks,       ///< sinks
  kWindow,      ///< a sliding window
  kSoftCap,     ///< a soft-cap
  kMultiToken,  ///< a sequence with more than one new token
  kBlockNot16,  ///< a block size other than kBakedBlockSize
};

/// One generic planted variant.
struct FeatureDecl {
  const char* name;          ///< planted variant name ("sim_" + name[8:] for its simulation)
  pc_family family;          ///< kernel family
  RowBug row_bug;            ///< attention: the bug
  CopyBug copy_bug;          ///< copies: the bug
  uint32_t kv_dtype_mask;    ///< pc_variant.kv_dtype_mask (0: the token dtype)
  uint32_t cache_kind_mask;  ///< pc_variant.cache_kind_mask
  uint32_t scale_kind_mask;  ///< pc_variant.scale_kind_mask
  uint64_t caps;             ///< PC_CAP_* beyond kFeatureLayoutCaps
  int32_t max_query_len;     ///< pc_variant.max_query_len
  bool wide_sizes;           ///< the control's head and block sizes (else kBugHeadSizes, ...)
  pc_context0 context0;      ///< pc_variant.context0
  Edge edge;                 ///< what its shrunk counterexample must show
  const char* description;   ///< one line: the bug, and the drawn edge that exposes it
};

inline constexpr uint32_t kTokenDtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
inline constexpr uint32_t kFp8Dtypes = (1u << PC_DTYPE_FP8_E4M3) | (1u << PC_DTYPE_FP8_E5M2);
inline constexpr uint32_t kAllKinds =
    (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
inline constexpr uint32_t kXSplit = 1u << PC_CACHE_X_SPLIT;
inline constexpr uint32_t kNoScales = 1u << PC_SCALE_NONE;
inline constexpr uint32_t kAnyScales =
    (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
/// Strides every generic variant takes (generic strides: any padding).
inline constexpr uint64_t kFeatureLayoutCaps = PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE |
                                               PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD_SHARED |
                                               PC_CAP_CACHE_PAD;
inline constexpr uint64_t kAllFeatures = PC_CAP_ALIBI | PC_CAP_COMBINED_KV | PC_CAP_SINKS |
                                         PC_CAP_WINDOW | PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL;

inline constexpr int32_t kControlHeadSizes[] = {32, 64, 80, 128, 256, 512};
inline constexpr int32_t kControlBlockSizes[] = {1, 8, 16, 32, 64, 128, 256};
inline constexpr int32_t kBugHeadSizes[] = {32, 64, 80, 128};
inline constexpr int32_t kBugBlockSizes[] = {8, 16, 32, 64};

/// The declaration of a planted attention bug: KV dtypes `kv_dtypes` (0: the token dtype), cache
/// kinds `kinds`, scale kinds `scales`, capabilities `caps`, queries of up to `max_query_len`
/// tokens, the bugs' head and block sizes, no context length 0.
constexpr FeatureDecl attention_bug(const char* name, RowBug bug, uint32_t kv_dtypes,
                                    uint32_t kinds, uint32_t scales, uint64_t caps,
                                    int32_t max_query_len, Edge edge, const char* description) {
  return FeatureDecl{name,
                     PC_FAMILY_PAGED_ATTENTION,
                     bug,
                     CopyBug::kNone,
                     kv_dtypes,
                     kinds,
                     scales,
                     caps,
                     max_query_len,
                     false,
                     PC_CONTEXT0_UNSUPPORTED,
                     edge,
                     description};
}

/// An attention bug of fp8 scales: an fp8 cache of any layout, scale kinds `scales`, decode.
constexpr FeatureDecl fp8_bug(const char* name, RowBug bug, uint32_t scales, Edge edge,
                              const char* description) {
  return attention_bug(name, bug, kFp8Dtypes, kAllKinds, scales, 0, 1, edge, description);
}

/// An attention bug of one feature: an x-split cache of the token dtype without scales, the
/// capabilities `caps`, queries of up to `max_query_len` tokens.
constexpr FeatureDecl feature_bug(const char* name, RowBug bug, uint64_t caps,
                                  int32_t max_query_len, Edge edge, const char* description) {
  return attention_bug(name, bug, 0, kXSplit, kNoScales, caps, max_query_len, edge, description);
}

inline constexpr FeatureDecl kFeatureDecls[] = {
    {"planted_control_features", PC_FAMILY_PAGED_ATTENTION, RowBug::kNone, CopyBug::kNone,
     kTokenDtypes | kFp8Dtypes, kAllKinds, kAnyScales, kAllFeatures, 16, true, PC_CONTEXT0_ZEROS,
     Edge::kNone,
     "correct generic kernel: every layout, fp8 KV with scales, sinks, window, soft-cap, "
     "q_len <= 16, block sizes 1-256, head sizes 32-512"},
    fp8_bug("planted_k_scale_on_v", RowBug::kKScaleOnV, kAnyScales, Edge::kFp8,
            "values dequantized with k_scale instead of v_scale (drawn: kv=fp8, k and v scales "
            "apart)"),
    fp8_bug("planted_kv_scales_ignored", RowBug::kScalesIgnored, kAnyScales, Edge::kFp8,
            "fp8 codes used without k_scale / v_scale (drawn: kv=fp8)"),
    fp8_bug("planted_scale_by_query_head", RowBug::kScaleByQueryHead, 1u << PC_SCALE_PER_KV_HEAD,
            Edge::kFp8Gqa,
            "per-kv-head scales indexed by the query head (clamped to the array) instead of the kv "
            "head (drawn: scale=per_kv_head with gqa and scales apart)"),
    attention_bug("planted_nhd_strides_swapped", RowBug::kNhdStridesSwapped, 0, 1u << PC_CACHE_NHD,
                  kNoScales, 0, 1, Edge::kNhdHeads,
                  "NHD pages addressed with the head and token (slot) strides exchanged (drawn: "
                  "cache=nhd with more than one kv head)"),
    feature_bug("planted_sink_in_numerator", RowBug::kSinkInNumerator, PC_CAP_SINKS, 1,
                Edge::kSinks,
                "the sink's weight also joins the numerator, times the first attended value "
                "(drawn: sinks, moderate or far above)"),
    feature_bug("planted_window_off_by_one", RowBug::kWindowOffByOne, PC_CAP_WINDOW, 1,
                Edge::kWindow,
                "the window attends W + 1 tokens, t >= p - W (drawn: window <= the context, e.g. "
                "window=1, window_block_edge)"),
    feature_bug("planted_soft_cap_after_max", RowBug::kSoftCapAfterMax, PC_CAP_SOFT_CAP, 1,
                Edge::kSoftCap,
                "soft-cap applied to l - m after the max subtraction, not to the scaled logit "
                "(drawn: soft_cap, below the logits' spread or 5-50)"),
    feature_bug("planted_causal_leak", RowBug::kCausalLeak, 0, 16, Edge::kMultiToken,
                "causal mask dropped between the new tokens: a new token sees the later new "
                "tokens (drawn: q_len>1, causal)"),
    feature_bug("planted_block_size_16", RowBug::kBakedBlockSize, 0, 1, Edge::kBlockNot16,
                "the value loop addresses blocks of 16 slots whatever the block size (drawn: "
                "block sizes 8, 32, 64)"),
    {"planted_control_gather_features", PC_FAMILY_GATHER_CACHED_KV, RowBug::kNone, CopyBug::kNone,
     kTokenDtypes | kFp8Dtypes, kAllKinds, kAnyScales,
     PC_CAP_COMBINED_KV | PC_CAP_DEQUANTIZE | PC_CAP_FULL_RANGE, 1, true, PC_CONTEXT0_UNSUPPORTED,
     Edge::kNone,
     "correct generic gather: every layout, fp8 codes raw or dequantized, combined K/V"},
    {"planted_control_reshape_features", PC_FAMILY_RESHAPE_AND_CACHE, RowBug::kNone, CopyBug::kNone,
     kTokenDtypes | kFp8Dtypes, kAllKinds, kAnyScales, PC_CAP_COMBINED_KV | PC_CAP_FULL_RANGE, 1,
     true, PC_CONTEXT0_UNSUPPORTED, Edge::kNone,
     "correct generic reshape_and_cache: every layout, saturating fp8 quantization, combined K/V"},
    {"planted_reshape_fp8_no_saturation", PC_FAMILY_RESHAPE_AND_CACHE, RowBug::kNone,
     CopyBug::kNoSaturation, kFp8Dtypes, kAllKinds, kAnyScales, PC_CAP_FULL_RANGE, 1, false,
     PC_CONTEXT0_UNSUPPORTED, Edge::kFp8,
     "fp8 quantization without saturation: values beyond the largest finite become NaN (e4m3) "
     "or infinity (e5m2) (drawn: kv=fp8, tokens past the saturation edge: full_range, bits)"},
};

/// The declaration of planted variant `name`, or of its simulation ("sim_" + the name past
/// "planted_"), or NULL.
inline const FeatureDecl* find_feature_decl(const char* name) {
  for (const FeatureDecl& d : kFeatureDecls) {
    if (std::strcmp(d.name, name) == 0) return &d;
    if (std::strncmp(name, "sim_", 4) == 0 && std::strcmp(d.name + 8, name + 4) == 0) return &d;
  }
  return nullptr;
}

}  // namespace pagecheck::verify::planted
