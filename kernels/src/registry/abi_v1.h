#pragma once
/// The registry's bridge to ABI version 1 (pagecheck/plugin_v1.h): a v1 descriptor's caps in
/// version-2 terms, and version-2 call arguments converted to version-1 arguments where v1 can
/// express them (docs/plugins.md, "Version-1 plugins").
#include <cstdint>
#include <string>

#include "pagecheck/plugin.h"
#include "pagecheck/plugin_v1.h"

namespace pagecheck::detail {

/// PC_V1_CAP_* flags as PC_CAP_* flags: ALIBI -> ALIBI, STRIDED_TOKENS -> TOKEN_STRIDE |
/// HEAD_STRIDE | STRIDED_OUTPUT, PADDED_CACHE -> CACHE_PAD | CACHE_PAD_SHARED, LARGE_CACHE ->
/// LARGE_CACHE; unknown bits are dropped.
uint64_t caps_from_v1(uint32_t caps_v1);

/// The version-1 arguments of one call; the member of the call's family is filled.
struct ArgsV1 {
  pc_paged_attention_args_v1 attention{};  ///< PC_FAMILY_PAGED_ATTENTION
  pc_gather_args_v1 gather{};              ///< PC_FAMILY_GATHER_CACHED_KV
  pc_reshape_and_cache_args_v1 reshape{};  ///< PC_FAMILY_RESHAPE_AND_CACHE
  /// The filled member for `family`.
  const void* of(pc_family family) const;
};

/// Outcome of a conversion: PC_STATUS_OK, PC_STATUS_UNSUPPORTED (v1 cannot express the call;
/// message "ABI v1 variant: cannot express ...") or PC_STATUS_INVALID_ARGUMENT (the version-2
/// arguments are malformed, e.g. a struct_size of 0).
struct ConversionResult {
  pc_status status = PC_STATUS_OK;  ///< see above
  std::string message;              ///< empty when OK
};

/// Converts the version-2 args struct of `family` at `args` into out's member for that family.
ConversionResult to_v1(pc_family family, const void* args, ArgsV1* out);

}  // namespace pagecheck::detail
