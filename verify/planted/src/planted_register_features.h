#pragma once
/// What the registrations of the planted variants share (internal): the refusal message, reading
/// the arguments, the entry points of each family, and the registration of the generic variants of
/// issues 15 and 16.
#include <cstdio>

#include "pagecheck/plugin_read.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"

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

/// Adds `v` to `registry` (origin "planted") with the entry points of its family: `attention`,
/// `gather` (gather_cached_kv) or `reshape` (reshape_and_cache).
inline void add_planted(VariantRegistry& registry, pc_variant v,
                        const PlantedEntryPoints& attention, const PlantedEntryPoints& gather,
                        const PlantedEntryPoints& reshape) {
  const PlantedEntryPoints& e = v.family == PC_FAMILY_PAGED_ATTENTION    ? attention
                                : v.family == PC_FAMILY_GATHER_CACHED_KV ? gather
                                                                         : reshape;
  v.can_implement = e.can_implement;
  v.workspace_bytes = e.workspace_bytes;
  v.launch = e.launch;
  registry.add(v, "planted");
}

/// Registers `p` when it is one of the generic variants (planted_features.h); false otherwise.
bool register_feature_variant(VariantRegistry& registry, const PlantedVariant& p);

}  // namespace pagecheck::verify
