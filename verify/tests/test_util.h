#pragma once
/// Helpers shared by the verify CPU tests.
#include <rapidcheck.h>

#include <vector>

#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::test {

/// Variant caps drawn at random: any non-empty subset of dtypes, head sizes and block sizes the
/// kernels know, and any capability flags (large caches excluded: CPU tests never allocate
/// them).
inline rc::Gen<gen::VariantCaps> random_caps(pc_family family) {
  return rc::gen::exec([family] {
    gen::VariantCaps caps;
    caps.name = "random";
    caps.family = family;
    const auto pick = [](auto all) {
      decltype(all) out;
      while (out.empty()) {
        for (auto v : all) {
          if (*rc::gen::arbitrary<bool>()) out.push_back(v);
        }
      }
      return out;
    };
    caps.dtypes = pick(std::vector<DType>{DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    caps.head_sizes = pick(std::vector<int64_t>{64, 80, 96, 128});
    caps.block_sizes = pick(std::vector<int64_t>{8, 16, 32});
    caps.caps = *rc::gen::inRange<uint32_t>(0, 8);  // ALIBI, STRIDED_TOKENS, PADDED_CACHE
    return caps;
  });
}

/// Caps declaring everything the CPU tests use.
inline gen::VariantCaps full_caps(pc_family family, bool large = false) {
  return gen::make_caps("full", family, {64, 80, 128}, {8, 16, 32},
                        PC_CAP_ALIBI | PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE |
                            (large ? static_cast<uint32_t>(PC_CAP_LARGE_CACHE) : 0u));
}

/// A generated spec bounded in size for CPU tests.
inline rc::Gen<gen::CaseSpec> small_case(pc_family family) {
  return rc::gen::mapcat(random_caps(family), [](gen::VariantCaps caps) {
    return rc::gen::scale(0.4, gen::case_spec(caps));
  });
}

}  // namespace pagecheck::verify::test
