/// Variant registry and plugin loading through the C ABI of pagecheck/plugin.h (version 2) and
/// pagecheck/plugin_v1.h (version 1).
#include "pagecheck/registry.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>

#include "pagecheck/plugin_read.h"
#include "registry/abi_v1.h"
#include "registry/v1_trampolines.h"

namespace pagecheck {

const char* family_name(pc_family family) {
  switch (family) {
    case PC_FAMILY_PAGED_ATTENTION:
      return "paged_attention";
    case PC_FAMILY_GATHER_CACHED_KV:
      return "gather_cached_kv";
    case PC_FAMILY_RESHAPE_AND_CACHE:
      return "reshape_and_cache";
  }
  return "unknown";
}

pc_family parse_family(std::string_view text) {
  for (pc_family f :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    if (text == family_name(f)) return f;
  }
  throw std::invalid_argument("unknown kernel family '" + std::string(text) +
                              "' (expected paged_attention, gather_cached_kv or "
                              "reshape_and_cache)");
}

namespace {

constexpr uint32_t kKnownDtypes = (1u << (PC_DTYPE_FP8_E5M2 + 1)) - 1;
constexpr uint32_t kV1Dtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
constexpr uint32_t kKnownKinds =
    (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
constexpr uint32_t kKnownScaleKinds =
    (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
constexpr uint64_t kKnownCaps = (uint64_t{PC_CAP_FULL_RANGE} << 1) - 1;
constexpr uint32_t kKnownRounding = (PC_ROUND_PARTITION_SUMS << 1) - 1;
/// The host reads every field of pc_variant up to and including user_data.
constexpr std::size_t kVariantBytesRead = offsetof(pc_variant, user_data) + sizeof(void*);

std::string hex(uint64_t bits) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(bits));
  return text;
}

bool known_family(pc_family f) {
  return f == PC_FAMILY_PAGED_ATTENTION || f == PC_FAMILY_GATHER_CACHED_KV ||
         f == PC_FAMILY_RESHAPE_AND_CACHE;
}

/// "variant 'name' from origin".
std::string where_of(const char* name, const std::string& origin) {
  return "variant '" + std::string(name ? name : "(null)") + "' from " + origin;
}

/// Checks shared by both ABI versions: name, family, launch, sizes. Throws RegistryError.
void check_common(const char* name, pc_family family, bool has_launch, uint32_t dtype_mask,
                  const int32_t* heads, int32_t num_heads, const int32_t* blocks,
                  int32_t num_blocks, const std::string& origin) {
  const std::string where = where_of(name, origin);
  if (name == nullptr || name[0] == '\0') {
    throw RegistryError("a variant from " + origin + " has no name");
  }
  if (!known_family(family)) {
    throw RegistryError(where + ": unknown family " + std::to_string(static_cast<int>(family)));
  }
  if (!has_launch) throw RegistryError(where + ": no launch function");
  if (dtype_mask == 0) throw RegistryError(where + ": declares no supported dtype");
  if (num_heads <= 0 || heads == nullptr) {
    throw RegistryError(where + ": declares no supported head size");
  }
  if (num_blocks <= 0 || blocks == nullptr) {
    throw RegistryError(where + ": declares no supported block size");
  }
}

/// Refuses bits this host does not know in a declared mask.
void check_bits(const std::string& where, const char* field, uint64_t bits, uint64_t known) {
  if ((bits & ~known) != 0) {
    throw RegistryError(where + ": " + field + " has bits this pagecheck does not know (" +
                        hex(bits & ~known) + ")");
  }
}

/// The version-2 declaration beyond check_common. Throws RegistryError.
void check_v2(const pc_variant& v, const std::string& origin) {
  const std::string where = where_of(v.name, origin);
  check_bits(where, "dtype_mask", v.dtype_mask, kKnownDtypes);
  check_bits(where, "kv_dtype_mask", v.kv_dtype_mask, kKnownDtypes);
  check_bits(where, "cache_kind_mask", v.cache_kind_mask, kKnownKinds);
  check_bits(where, "scale_kind_mask", v.scale_kind_mask, kKnownScaleKinds);
  check_bits(where, "caps", v.caps, kKnownCaps);
  if (v.max_query_len < 0) {
    throw RegistryError(where + ": max_query_len " + std::to_string(v.max_query_len) + " < 0");
  }
  if (v.num_partition_sizes < 0 || (v.num_partition_sizes > 0 && v.partition_sizes == nullptr)) {
    throw RegistryError(where + ": num_partition_sizes " + std::to_string(v.num_partition_sizes) +
                        " without a partition_sizes array");
  }
  for (int32_t i = 0; i < v.num_partition_sizes; ++i) {
    if (v.partition_sizes[i] <= 0) {
      throw RegistryError(where + ": partition_sizes[" + std::to_string(i) +
                          "] = " + std::to_string(v.partition_sizes[i]) + " is not positive");
    }
  }
  const pc_precision& p = v.precision;
  const pc_precision zero{};
  if (p.struct_size == 0 && (p.qk_accum != zero.qk_accum || p.pv_accum != zero.pv_accum ||
                             p.rounded != 0 || p.storage_sum_terms != 0)) {
    throw RegistryError(where +
                        ": precision.struct_size is 0 but precision fields are set (set "
                        "it to sizeof(pc_precision))");
  }
  const pc_precision q = abi::read_prefix(p);
  for (pc_accum a : {q.qk_accum, q.pv_accum}) {
    if (a != PC_ACCUM_FLOAT32 && a != PC_ACCUM_STORAGE) {
      throw RegistryError(where + ": precision accumulator " + std::to_string(static_cast<int>(a)) +
                          " is not a pc_accum");
    }
  }
  check_bits(where, "precision.rounded", q.rounded, kKnownRounding);
  if (q.storage_sum_terms < 0) {
    throw RegistryError(where + ": precision.storage_sum_terms " +
                        std::to_string(q.storage_sum_terms) + " < 0");
  }
  if (v.context0 != PC_CONTEXT0_UNSUPPORTED && v.context0 != PC_CONTEXT0_UNTOUCHED &&
      v.context0 != PC_CONTEXT0_ZEROS) {
    throw RegistryError(where + ": context0 " + std::to_string(static_cast<int>(v.context0)) +
                        " is not a pc_context0");
  }
}

/// Owned copies of the strings and arrays a descriptor points to.
std::unique_ptr<VariantInfo> owned_info(const char* name, const char* description,
                                        const std::string& origin, const int32_t* heads,
                                        int32_t num_heads, const int32_t* blocks,
                                        int32_t num_blocks) {
  auto info = std::make_unique<VariantInfo>();
  info->name = name;
  info->description = description ? description : "";
  info->origin = origin;
  info->head_sizes.assign(heads, heads + num_heads);
  info->block_sizes.assign(blocks, blocks + num_blocks);
  return info;
}

}  // namespace

void VariantRegistry::add(const pc_variant& raw, const std::string& origin) {
  if (raw.struct_size < kVariantBytesRead) {
    throw RegistryError(
        where_of(raw.struct_size >= offsetof(pc_variant, description) ? raw.name : nullptr,
                 origin) +
        ": struct_size " + std::to_string(raw.struct_size) + " is smaller than the " +
        std::to_string(kVariantBytesRead) +
        " bytes of pc_variant this pagecheck reads (set struct_size = "
        "sizeof(pc_variant) with pagecheck/plugin.h of ABI version 2)");
  }
  pc_variant v = abi::read_prefix(raw);
  check_common(v.name, v.family, v.launch != nullptr, v.dtype_mask & kKnownDtypes, v.head_sizes,
               v.num_head_sizes, v.block_sizes, v.num_block_sizes, origin);
  check_v2(v, origin);
  auto info = owned_info(v.name, v.description, origin, v.head_sizes, v.num_head_sizes,
                         v.block_sizes, v.num_block_sizes);
  if (v.num_partition_sizes > 0) {
    info->partition_sizes.assign(v.partition_sizes, v.partition_sizes + v.num_partition_sizes);
  }
  v.struct_size = sizeof(pc_variant);
  v.precision = abi::read_prefix(v.precision);
  v.precision.struct_size = sizeof(pc_precision);
  info->abi_version = PAGECHECK_PLUGIN_ABI_VERSION;
  info->variant = v;
  info->variant.name = info->name.c_str();
  info->variant.description = info->description.c_str();
  info->variant.head_sizes = info->head_sizes.data();
  info->variant.block_sizes = info->block_sizes.data();
  info->variant.partition_sizes =
      info->partition_sizes.empty() ? nullptr : info->partition_sizes.data();
  insert(std::move(info));
}

void VariantRegistry::add_v1(const pc_variant_v1& v, const std::string& origin) {
  check_common(v.name, v.family, v.launch != nullptr, v.dtype_mask & kV1Dtypes, v.head_sizes,
               v.num_head_sizes, v.block_sizes, v.num_block_sizes, origin);
  auto info = owned_info(v.name, v.description, origin, v.head_sizes, v.num_head_sizes,
                         v.block_sizes, v.num_block_sizes);
  info->abi_version = PAGECHECK_PLUGIN_ABI_VERSION_1;
  info->variant_v1 = v;
  info->variant_v1.name = info->name.c_str();
  info->variant_v1.description = info->description.c_str();
  info->variant_v1.head_sizes = info->head_sizes.data();
  info->variant_v1.block_sizes = info->block_sizes.data();

  // The normalized version-2 descriptor (docs/plugins.md, "Version-1 plugins").
  pc_variant& n = info->variant;
  n = pc_variant{};
  n.struct_size = sizeof(pc_variant);
  n.name = info->name.c_str();
  n.description = info->description.c_str();
  n.family = v.family;
  n.dtype_mask = v.dtype_mask & kV1Dtypes;
  n.kv_dtype_mask = 0;    // the cache dtype is the token dtype
  n.cache_kind_mask = 0;  // x-split only
  n.scale_kind_mask = 0;  // no scales
  n.head_sizes = info->head_sizes.data();
  n.num_head_sizes = v.num_head_sizes;
  n.block_sizes = info->block_sizes.data();
  n.num_block_sizes = v.num_block_sizes;
  n.caps = detail::caps_from_v1(v.caps);
  n.max_query_len = 1;
  n.partition_sizes = nullptr;
  n.num_partition_sizes = 0;
  n.precision = pc_precision{};
  n.precision.struct_size = sizeof(pc_precision);  // strict float32 model
  n.context0 = PC_CONTEXT0_UNSUPPORTED;
  n.nondeterministic = 0;
  n.can_implement = &detail::v1_can_implement;
  n.workspace_bytes = v.workspace_bytes != nullptr ? &detail::v1_workspace_bytes : nullptr;
  n.launch = &detail::v1_launch;
  n.user_data = info.get();
  insert(std::move(info));
}

void VariantRegistry::insert(std::unique_ptr<VariantInfo> info) {
  if (find(info->variant.family, info->name) != nullptr) {
    throw RegistryError(where_of(info->name.c_str(), info->origin) + ": a " +
                        family_name(info->variant.family) + " variant of that name is " +
                        "already registered");
  }
  variants_.push_back(std::move(info));
}

namespace {
struct HostContext {
  VariantRegistry* registry;
  const std::string* origin;
  std::string error;
  int added = 0;
};

template <typename Descriptor, typename Add>
pc_status add_through(void* context, const Descriptor* variant, Add add) {
  auto* ctx = static_cast<HostContext*>(context);
  if (variant == nullptr) {
    if (ctx->error.empty()) ctx->error = *ctx->origin + ": add_variant called with a null variant";
    return PC_STATUS_INVALID_ARGUMENT;
  }
  try {
    add(*ctx->registry, *variant, *ctx->origin);
    ++ctx->added;
    return PC_STATUS_OK;
  } catch (const std::exception& e) {
    if (ctx->error.empty()) ctx->error = e.what();
    return PC_STATUS_INVALID_ARGUMENT;
  }
}

pc_status add_variant_thunk(void* context, const pc_variant* variant) {
  return add_through(
      context, variant,
      [](VariantRegistry& r, const pc_variant& v, const std::string& origin) { r.add(v, origin); });
}

pc_status add_variant_v1_thunk(void* context, const pc_variant_v1* variant) {
  return add_through(context, variant,
                     [](VariantRegistry& r, const pc_variant_v1& v, const std::string& origin) {
                       r.add_v1(v, origin);
                     });
}
}  // namespace

void VariantRegistry::register_with(pc_register_fn register_fn, const std::string& origin,
                                    int abi_version) {
  HostContext ctx{this, &origin, {}, 0};
  // A version-1 plugin sees the first three fields (pc_host_v1): its add_variant is
  // add_variant_v1 here, and abi_version is the version it declared.
  const pc_host host{abi_version, &ctx, &add_variant_v1_thunk, &add_variant_thunk};
  const int rc = register_fn(&host);
  if (!ctx.error.empty()) throw RegistryError(ctx.error);
  if (rc != 0) {
    throw RegistryError(origin + ": registration function returned " + std::to_string(rc) +
                        " (host ABI version " + std::to_string(abi_version) + ")");
  }
  if (ctx.added == 0) throw RegistryError(origin + ": registered no variant");
}

void VariantRegistry::load_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    throw RegistryError("plugin " + path + ": cannot load: " + (err ? err : "unknown error"));
  }
  std::shared_ptr<void> owned(handle, [](void* h) { dlclose(h); });
  const auto* abi = static_cast<const int*>(dlsym(handle, PAGECHECK_PLUGIN_ABI_SYMBOL));
  if (abi == nullptr) {
    throw RegistryError("plugin " + path + ": missing symbol " + PAGECHECK_PLUGIN_ABI_SYMBOL +
                        " (declare it with PAGECHECK_PLUGIN_DECLARE_ABI())");
  }
  if (*abi < PAGECHECK_PLUGIN_ABI_OLDEST || *abi > PAGECHECK_PLUGIN_ABI_VERSION) {
    throw RegistryError("plugin " + path + ": built for plugin ABI version " +
                        std::to_string(*abi) + ", this pagecheck loads versions " +
                        std::to_string(PAGECHECK_PLUGIN_ABI_OLDEST) + " to " +
                        std::to_string(PAGECHECK_PLUGIN_ABI_VERSION));
  }
  void* symbol = dlsym(handle, PAGECHECK_PLUGIN_REGISTER_SYMBOL);
  if (symbol == nullptr) {
    throw RegistryError("plugin " + path + ": missing symbol " + PAGECHECK_PLUGIN_REGISTER_SYMBOL);
  }
  auto fn = reinterpret_cast<pc_register_fn>(symbol);
  plugin_handles_.push_back(owned);
  register_with(fn, path, *abi);
}

std::vector<const VariantInfo*> VariantRegistry::family(pc_family f) const {
  std::vector<const VariantInfo*> out;
  for (const auto& v : variants_) {
    if (v->variant.family == f) out.push_back(v.get());
  }
  return out;
}

const VariantInfo* VariantRegistry::find(pc_family f, std::string_view name) const {
  for (const auto& v : variants_) {
    if (v->variant.family == f && v->name == name) return v.get();
  }
  return nullptr;
}

}  // namespace pagecheck
