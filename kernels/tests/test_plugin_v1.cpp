// A plugin built for ABI version 1 (pagecheck/plugin_v1.h): one variant per family whose
// can_implement, workspace_bytes and launch record the version-1 arguments they receive (no GPU
// work), so registry_v1_test can check the host's conversion field by field.
#include <pagecheck/plugin_v1.h>

#include <cstdio>
#include <cstring>

PAGECHECK_PLUGIN_DECLARE_ABI_V1()

namespace {

const int32_t kHeadSizes[] = {64, 128};
const int32_t kBlockSizes[] = {16, 32};

/// The last arguments seen per family, and how many calls each function got.
pc_paged_attention_args_v1 g_attention;
pc_gather_args_v1 g_gather;
pc_reshape_and_cache_args_v1 g_reshape;
int g_calls = 0;

void record(const pc_variant_v1* self, const void* args) {
  ++g_calls;
  switch (self->family) {
    case PC_FAMILY_PAGED_ATTENTION:
      std::memcpy(&g_attention, args, sizeof g_attention);
      break;
    case PC_FAMILY_GATHER_CACHED_KV:
      std::memcpy(&g_gather, args, sizeof g_gather);
      break;
    case PC_FAMILY_RESHAPE_AND_CACHE:
      std::memcpy(&g_reshape, args, sizeof g_reshape);
      break;
  }
}

pc_status can_implement(const pc_variant_v1* self, const void* args, char* msg, size_t len) {
  record(self, args);
  std::snprintf(msg, len, "v1 plugin: can_implement saw user_data %p", self->user_data);
  return PC_STATUS_OK;
}

size_t workspace_bytes(const pc_variant_v1* self, const void* args) {
  record(self, args);
  return 4096;
}

pc_status launch(const pc_variant_v1* self, const void* args, void* workspace, void* stream,
                 char* msg, size_t len) {
  record(self, args);
  std::snprintf(msg, len, "v1 plugin: launched with workspace %p on stream %p", workspace, stream);
  return PC_STATUS_INVALID_ARGUMENT;  // so that the test sees the message come back
}

int g_tag = 42;

}  // namespace

/// Copies the last recorded arguments of `family` into `out` (`bytes` = the struct's size) and
/// returns the number of calls so far.
extern "C" PAGECHECK_PLUGIN_VISIBLE int pagecheck_test_v1_recorded(int family, void* out,
                                                                   size_t bytes) {
  const void* src = family == PC_FAMILY_PAGED_ATTENTION    ? static_cast<const void*>(&g_attention)
                    : family == PC_FAMILY_GATHER_CACHED_KV ? static_cast<const void*>(&g_gather)
                                                           : static_cast<const void*>(&g_reshape);
  if (out != nullptr) std::memcpy(out, src, bytes);
  return g_calls;
}

extern "C" PAGECHECK_PLUGIN_VISIBLE int pagecheck_plugin_register(const pc_host_v1* host) {
  // A version-1 plugin compares the host's version with its own (1).
  if (host == nullptr || host->abi_version != PAGECHECK_PLUGIN_ABI_VERSION_1) return 1;
  const struct {
    const char* name;
    pc_family family;
    uint32_t caps;
  } defs[] = {
      {"v1_attention", PC_FAMILY_PAGED_ATTENTION,
       PC_V1_CAP_ALIBI | PC_V1_CAP_STRIDED_TOKENS | PC_V1_CAP_PADDED_CACHE | PC_V1_CAP_LARGE_CACHE},
      {"v1_gather", PC_FAMILY_GATHER_CACHED_KV, PC_V1_CAP_STRIDED_TOKENS},
      {"v1_reshape", PC_FAMILY_RESHAPE_AND_CACHE, PC_V1_CAP_PADDED_CACHE},
  };
  for (const auto& d : defs) {
    pc_variant_v1 v{};
    v.name = d.name;
    v.description = "version-1 test variant";
    v.family = d.family;
    v.dtype_mask = (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
    v.head_sizes = kHeadSizes;
    v.num_head_sizes = 2;
    v.block_sizes = kBlockSizes;
    v.num_block_sizes = 2;
    v.caps = d.caps;
    v.can_implement = &can_implement;
    v.workspace_bytes = &workspace_bytes;
    v.launch = &launch;
    v.user_data = &g_tag;
    if (host->add_variant(host->context, &v) != PC_STATUS_OK) return 2;
  }
  return 0;
}
