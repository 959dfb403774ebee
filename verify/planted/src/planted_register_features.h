#pragma once
/// What the registrations of the planted variants share (internal): the refusal message, reading
/// the arguments, the entry points of each family, the one registration path (add_planted: a
/// declaration and entry points into a pc_variant), and the registration of the generic variants
/// of issues 15 and 16.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "pagecheck/plugin_read.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"
#include "pagecheck/verify/planted_features.h"

namespace pagecheck::verify {

/// Writes `text` into the caller's message buffer (when it has one) and returns `status`.
inline pc_status refuse(char* msg, size_t len, const char* text, pc_status status) {
  if (msg != nullptr && len > 0) std::snprintf(msg, len, "%s", text);
  return status;
}

/// Reads the version-2 arguments `raw` of type Args (abi::read) into `*out`: PC_STATUS_OK, or the
/// refusal of NULL arguments or a struct_size of 0.
template <typename Args>
pc_status read_args(const void* raw, Args* out, char* msg, size_t len) {
  const auto* args = static_cast<const Args*>(raw);
  if (args == nullptr || args->struct_size == 0) {
    return refuse(msg, len, "args is NULL or its struct_size is 0", PC_STATUS_INVALID_ARGUMENT);
  }
  *out = abi::read(*args);
  return PC_STATUS_OK;
}

/// The entry points of the planted variants of one family.
struct PlantedEntryPoints {
  decltype(pc_variant::can_implement) can_implement;      ///< the family's can_implement
  decltype(pc_variant::workspace_bytes) workspace_bytes;  ///< NULL: no workspace
  decltype(pc_variant::launch) launch;                    ///< the family's launch
};

/// Sizes a variant declares (head, block or partition sizes); none: NULL and 0.
struct DeclaredSizes {
  const int32_t* sizes = nullptr;  ///< the sizes
  int32_t count = 0;               ///< how many
};

/// The sizes of array `sizes`.
template <std::size_t N>
constexpr DeclaredSizes sizes_of(const int32_t (&sizes)[N]) {
  return {sizes, static_cast<int32_t>(N)};
}

/// What a planted variant declares beyond its name, description and entry points. Every planted
/// variant takes float32, float16 and bfloat16 tokens, generic token and head strides and cache
/// padding (planted::kFeatureLayoutCaps, the built-ins' own), is strict float32 and deterministic
/// (the race variant's claim is its bug).
struct PlantedDeclaration {
  pc_family family;               ///< kernel family
  uint32_t kv_dtype_mask;         ///< pc_variant.kv_dtype_mask (0: the token dtype)
  uint32_t cache_kind_mask;       ///< pc_variant.cache_kind_mask
  uint32_t scale_kind_mask;       ///< pc_variant.scale_kind_mask
  DeclaredSizes head_sizes;       ///< pc_variant.head_sizes
  DeclaredSizes block_sizes;      ///< pc_variant.block_sizes
  DeclaredSizes partition_sizes;  ///< pc_variant.partition_sizes (split-K only)
  uint64_t caps;                  ///< PC_CAP_* beyond planted::kFeatureLayoutCaps
  int32_t max_query_len;          ///< pc_variant.max_query_len
  pc_context0 context0;           ///< pc_variant.context0
};

/// Adds `p` declared by `d` to `registry` (origin "planted"), its pc_variant::user_data
/// `user_data`, with the entry points of its family: `attention`, `gather` (gather_cached_kv) or
/// `reshape` (reshape_and_cache).
inline void add_planted(VariantRegistry& registry, const PlantedVariant& p,
                        const PlantedDeclaration& d, const void* user_data,
                        const PlantedEntryPoints& attention, const PlantedEntryPoints& gather,
                        const PlantedEntryPoints& reshape) {
  const PlantedEntryPoints& e = d.family == PC_FAMILY_PAGED_ATTENTION    ? attention
                                : d.family == PC_FAMILY_GATHER_CACHED_KV ? gather
                                                                         : reshape;
  // Every field in pc_variant's order (the ABI appends new fields at the end).
  const pc_variant v{sizeof(pc_variant),
                     p.name.c_str(),
                     p.description.c_str(),
                     d.family,
                     planted::kTokenDtypes,
                     d.kv_dtype_mask,
                     d.cache_kind_mask,
                     d.scale_kind_mask,
                     d.head_sizes.sizes,
                     d.head_sizes.count,
                     d.block_sizes.sizes,
                     d.block_sizes.count,
                     planted::kFeatureLayoutCaps | d.caps,
                     d.max_query_len,
                     d.partition_sizes.sizes,
                     d.partition_sizes.count,
                     pc_precision{sizeof(pc_precision), {}, {}, 0, 0},  // strict float32
                     d.context0,
                     0,  // deterministic
                     e.can_implement,
                     e.workspace_bytes,
                     e.launch,
                     const_cast<void*>(user_data)};
  registry.add(v, "planted");
}

/// Registers `p` when it is one of the generic variants (planted_features.h); false otherwise.
bool register_feature_variant(VariantRegistry& registry, const PlantedVariant& p);

}  // namespace pagecheck::verify
