#pragma once
/// What a variant declares it supports, as the generators need it: family, dtypes, head sizes,
/// block sizes and capability flags. Built from a registered pc_variant or by hand (CPU tests,
/// simulated variants), so the generators work for kernels they have never seen.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/dtype.h"

namespace pagecheck {
struct VariantInfo;
}

namespace pagecheck::verify::gen {

/// Declared support of one variant.
struct VariantCaps {
  std::string name;                              ///< variant name
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  std::vector<DType> dtypes;                     ///< supported dtypes (non-empty)
  std::vector<int64_t> head_sizes;               ///< supported head sizes (non-empty)
  std::vector<int64_t> block_sizes;              ///< supported block sizes (non-empty)
  uint32_t caps = 0;                             ///< PC_CAP_* flags

  /// True when the flag is declared.
  bool has(uint32_t flag) const { return (caps & flag) != 0; }
  /// Throws std::invalid_argument naming the variant when a list is empty or a head size is
  /// not a multiple of 8 (16 bytes of float16 / bfloat16).
  void validate() const;
};

/// Caps of a registered variant.
VariantCaps caps_of(const VariantInfo& info);
/// Caps of a variant that declares every dtype, the given sizes and flags (tests).
VariantCaps make_caps(std::string name, pc_family family, std::vector<int64_t> head_sizes,
                      std::vector<int64_t> block_sizes, uint32_t caps);

void to_json(nlohmann::json& j, const VariantCaps& caps);
void from_json(const nlohmann::json& j, VariantCaps& caps);

}  // namespace pagecheck::verify::gen
