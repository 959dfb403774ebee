/// Variant registry and plugin loading through the C ABI of pagecheck/plugin.h.
#include "pagecheck/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <stdexcept>

namespace pagecheck {

const char* family_name(pc_family family) {
  switch (family) {
    case PC_FAMILY_PAGED_ATTENTION: return "paged_attention";
    case PC_FAMILY_GATHER_CACHED_KV: return "gather_cached_kv";
    case PC_FAMILY_RESHAPE_AND_CACHE: return "reshape_and_cache";
  }
  return "unknown";
}

pc_family parse_family(std::string_view text) {
  for (pc_family f : {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV,
                      PC_FAMILY_RESHAPE_AND_CACHE}) {
    if (text == family_name(f)) return f;
  }
  throw std::invalid_argument("unknown kernel family '" + std::string(text) +
                              "' (expected paged_attention, gather_cached_kv or "
                              "reshape_and_cache)");
}

bool VariantInfo::supports(pc_dtype dtype, int64_t head_size, int64_t block_size) const {
  if ((variant.dtype_mask & (1u << static_cast<unsigned>(dtype))) == 0) return false;
  const bool head_ok =
      std::find(head_sizes.begin(), head_sizes.end(), head_size) != head_sizes.end();
  const bool block_ok =
      std::find(block_sizes.begin(), block_sizes.end(), block_size) != block_sizes.end();
  return head_ok && block_ok;
}

void VariantRegistry::add(const pc_variant& v, const std::string& origin) {
  const std::string where = "variant '" + std::string(v.name ? v.name : "(null)") + "' from " +
                            origin;
  if (v.name == nullptr || v.name[0] == '\0') {
    throw RegistryError("a variant from " + origin + " has no name");
  }
  if (v.family != PC_FAMILY_PAGED_ATTENTION && v.family != PC_FAMILY_GATHER_CACHED_KV &&
      v.family != PC_FAMILY_RESHAPE_AND_CACHE) {
    throw RegistryError(where + ": unknown family " + std::to_string(static_cast<int>(v.family)));
  }
  if (v.launch == nullptr) throw RegistryError(where + ": no launch function");
  if ((v.dtype_mask & 0x7u) == 0) throw RegistryError(where + ": declares no supported dtype");
  if (v.num_head_sizes <= 0 || v.head_sizes == nullptr) {
    throw RegistryError(where + ": declares no supported head size");
  }
  if (v.num_block_sizes <= 0 || v.block_sizes == nullptr) {
    throw RegistryError(where + ": declares no supported block size");
  }
  if (find(v.family, v.name) != nullptr) {
    throw RegistryError(where + ": a " + family_name(v.family) + " variant of that name is " +
                        "already registered");
  }
  auto info = std::make_unique<VariantInfo>();
  info->name = v.name;
  info->description = v.description ? v.description : "";
  info->origin = origin;
  info->head_sizes.assign(v.head_sizes, v.head_sizes + v.num_head_sizes);
  info->block_sizes.assign(v.block_sizes, v.block_sizes + v.num_block_sizes);
  info->variant = v;
  info->variant.name = info->name.c_str();
  info->variant.description = info->description.c_str();
  info->variant.head_sizes = info->head_sizes.data();
  info->variant.block_sizes = info->block_sizes.data();
  variants_.push_back(std::move(info));
}

namespace {
struct HostContext {
  VariantRegistry* registry;
  const std::string* origin;
  std::string error;
  int added = 0;
};

pc_status add_variant_thunk(void* context, const pc_variant* variant) {
  auto* ctx = static_cast<HostContext*>(context);
  if (variant == nullptr) {
    ctx->error = "add_variant called with a null variant";
    return PC_STATUS_INVALID_ARGUMENT;
  }
  try {
    ctx->registry->add(*variant, *ctx->origin);
    ++ctx->added;
    return PC_STATUS_OK;
  } catch (const std::exception& e) {
    if (ctx->error.empty()) ctx->error = e.what();
    return PC_STATUS_INVALID_ARGUMENT;
  }
}
}  // namespace

void VariantRegistry::register_with(pc_register_fn register_fn, const std::string& origin) {
  HostContext ctx{this, &origin, {}, 0};
  pc_host host{PAGECHECK_PLUGIN_ABI_VERSION, &ctx, &add_variant_thunk};
  const int rc = register_fn(&host);
  if (!ctx.error.empty()) throw RegistryError(ctx.error);
  if (rc != 0) {
    throw RegistryError(origin + ": registration function returned " + std::to_string(rc) +
                        " (host ABI version " + std::to_string(PAGECHECK_PLUGIN_ABI_VERSION) +
                        ")");
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
  if (*abi != PAGECHECK_PLUGIN_ABI_VERSION) {
    throw RegistryError("plugin " + path + ": built for plugin ABI version " +
                        std::to_string(*abi) + ", this pagecheck expects " +
                        std::to_string(PAGECHECK_PLUGIN_ABI_VERSION));
  }
  void* symbol = dlsym(handle, PAGECHECK_PLUGIN_REGISTER_SYMBOL);
  if (symbol == nullptr) {
    throw RegistryError("plugin " + path + ": missing symbol " +
                        PAGECHECK_PLUGIN_REGISTER_SYMBOL);
  }
  auto fn = reinterpret_cast<pc_register_fn>(symbol);
  plugin_handles_.push_back(owned);
  register_with(fn, path);
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
