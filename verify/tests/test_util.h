#pragma once
/// Helpers shared by the verify CPU tests.
#include <rapidcheck.h>

#include <map>
#include <string>
#include <vector>

#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::test {

/// Every capability flag the generators read, large caches excepted.
inline constexpr uint64_t kAllCaps =
    PC_CAP_ALIBI | PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT |
    PC_CAP_CACHE_PAD_SHARED | PC_CAP_CACHE_PAD | PC_CAP_COMBINED_KV | PC_CAP_SINKS | PC_CAP_WINDOW |
    PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL | PC_CAP_DEQUANTIZE | PC_CAP_FULL_RANGE;

/// The flags of the old (ABI v1) decode variants: ALiBi, strides and cache padding.
inline constexpr uint64_t kDecodeCaps = PC_CAP_ALIBI | PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE |
                                        PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD_SHARED |
                                        PC_CAP_CACHE_PAD;

/// Which cases of a default run default_run() returns.
enum class LargeCases { kKeep, kSkip };

/// The specs of a default run of one variant (200 cases, seed 1), without its multi-GiB
/// large-cache cases when `large` is kSkip.
inline std::vector<gen::CaseSpec> default_run(const gen::VariantCaps& caps,
                                              LargeCases large = LargeCases::kKeep) {
  constexpr int kCases = 200;
  constexpr uint64_t kSeed = 1;
  check::Target target;
  target.caps = caps;
  std::vector<gen::CaseSpec> specs;
  for (int i = 0; i < kCases; ++i) {
    const check::CaseParams params = check::case_params(target, kSeed, kCases, i);
    if (params.large && large == LargeCases::kSkip) continue;
    specs.push_back(check::generate_case(target, params));
  }
  return specs;
}

/// Edge-case tag -> cases among `specs`, tagged under `caps` (as a run's report counts them).
inline std::map<std::string, int> tag_histogram(const std::vector<gen::CaseSpec>& specs,
                                                const gen::VariantCaps& caps) {
  std::map<std::string, int> tags;
  for (const auto& s : specs) {
    for (const auto& t : gen::edge_tags(s, caps)) ++tags[t];
  }
  return tags;
}

/// A non-empty random subset of `all` (in its order).
template <typename T>
std::vector<T> some_of(const std::vector<T>& all) {
  std::vector<T> out;
  while (out.empty()) {
    for (const T& v : all) {
      if (*rc::gen::arbitrary<bool>()) out.push_back(v);
    }
  }
  return out;
}

/// Variant caps drawn at random: any non-empty subset of dtypes, cache dtypes, page layouts,
/// head sizes and block sizes the kernels know, any fp8 scale kinds, capability flags, query
/// length, partition sizes and context-0 declaration (large caches excluded: CPU tests never
/// allocate them).
inline rc::Gen<gen::VariantCaps> random_caps(pc_family family) {
  return rc::gen::exec([family] {
    gen::VariantCaps caps;
    caps.name = "random";
    caps.family = family;
    caps.dtypes = some_of(std::vector<DType>{DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    if (*rc::gen::arbitrary<bool>()) {
      caps.kv_dtypes = caps.dtypes;
      for (DType fp8 : {DType::kFloat8E4M3, DType::kFloat8E5M2}) {
        if (*rc::gen::arbitrary<bool>()) caps.kv_dtypes.push_back(fp8);
      }
    }
    caps.cache_kinds = some_of(std::vector<ref::CacheKind>{
        ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND});
    for (ref::ScaleKind k : {ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead}) {
      if (*rc::gen::arbitrary<bool>()) caps.scale_kinds.push_back(k);
    }
    caps.head_sizes = some_of(std::vector<int64_t>{64, 80, 96, 128});
    caps.block_sizes = some_of(std::vector<int64_t>{8, 16, 32});
    for (int bit = 0; bit < 64; ++bit) {
      const uint64_t flag = uint64_t{1} << bit;
      if ((kAllCaps & flag) && *rc::gen::arbitrary<bool>()) caps.caps |= flag;
    }
    caps.max_query_len = *rc::gen::element<int64_t>(1, 1, 4, 32);
    if (*rc::gen::arbitrary<bool>()) caps.partition_sizes = some_of(std::vector<int64_t>{64, 384});
    caps.context0 =
        *rc::gen::element(PC_CONTEXT0_UNSUPPORTED, PC_CONTEXT0_UNTOUCHED, PC_CONTEXT0_ZEROS);
    return caps;
  });
}

/// Caps declaring everything the CPU tests use: every page layout, fp8 caches with both scale
/// kinds, every flag, multi-token queries and context-0 rows (untouched).
inline gen::VariantCaps full_caps(pc_family family, bool large = false) {
  gen::VariantCaps caps =
      gen::make_caps("full", family, {64, 80, 128}, {8, 16, 32},
                     kAllCaps | (large ? static_cast<uint64_t>(PC_CAP_LARGE_CACHE) : uint64_t{0}));
  caps.kv_dtypes = caps.dtypes;
  caps.kv_dtypes.insert(caps.kv_dtypes.end(), {DType::kFloat8E4M3, DType::kFloat8E5M2});
  caps.cache_kinds = {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND};
  caps.scale_kinds = {ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead};
  caps.max_query_len = 32;
  caps.context0 = PC_CONTEXT0_UNTOUCHED;
  return caps;
}

/// Caps of a decode variant as ABI v1 could declare them: x-split caches of the token dtype,
/// one query token, ALiBi, strides and padding.
inline gen::VariantCaps decode_caps(pc_family family, bool large = false) {
  return gen::make_caps(
      "decode", family, {64, 80, 128}, {8, 16, 32},
      kDecodeCaps | (large ? static_cast<uint64_t>(PC_CAP_LARGE_CACHE) : uint64_t{0}));
}

/// A generated spec bounded in size for CPU tests, under random caps.
inline rc::Gen<gen::CaseSpec> small_case(pc_family family) {
  return rc::gen::mapcat(random_caps(family), [](gen::VariantCaps caps) {
    return rc::gen::scale(0.4, gen::case_spec(caps));
  });
}

/// As small_case, under random caps of decode variants (for simulations of decode kernels).
inline rc::Gen<gen::CaseSpec> small_decode_case(pc_family family) {
  return rc::gen::mapcat(random_caps(family), [](gen::VariantCaps caps) {
    caps.kv_dtypes.clear();
    caps.cache_kinds = {ref::CacheKind::kXSplit};
    caps.caps &= kDecodeCaps;
    caps.max_query_len = 1;
    caps.context0 = PC_CONTEXT0_UNSUPPORTED;
    return rc::gen::scale(0.4, gen::case_spec(caps));
  });
}

}  // namespace pagecheck::verify::test
