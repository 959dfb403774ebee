// Version-2 test plugins for the registry's plugin loading, one per PLUGIN_KIND (compile
// definition):
//   1 good: registers one gather variant whose launch refuses (no GPU work)
//   2 wrong ABI version   3 no registration function   4 a variant that declares nothing
//   5 registers no variant   6 registration function returns an error
//   7 a variant whose struct_size is smaller than pc_variant
#include <pagecheck/plugin.h>

#include <cstddef>
#include <cstdio>

#if PLUGIN_KIND == 2
extern "C" PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = 999;
#else
PAGECHECK_PLUGIN_DECLARE_ABI()
#endif

namespace {
const int32_t kHeadSizes[] = {128};
const int32_t kBlockSizes[] = {16};

[[maybe_unused]] pc_status refuse(const pc_variant*, const pc_device_info* device, const void*,
                                  void*, void*, char* msg, size_t msg_len) {
  std::snprintf(msg, msg_len, "test plugin: launch refused on %d SMs",
                device != nullptr ? device->sm_count : -1);
  return PC_STATUS_UNSUPPORTED;
}
}  // namespace

#if PLUGIN_KIND != 3
extern "C" PAGECHECK_PLUGIN_VISIBLE int pagecheck_plugin_register(const pc_host* host) {
#if PLUGIN_KIND == 5
  (void)host;
  return 0;
#elif PLUGIN_KIND == 6
  (void)host;
  return 7;
#else
  if (host == nullptr || host->abi_version != PAGECHECK_PLUGIN_ABI_VERSION) return 1;
  pc_variant v{};
  v.struct_size = PLUGIN_KIND == 7 ? offsetof(pc_variant, caps) : sizeof(pc_variant);
  v.name = "test_plugin_gather";
  v.description = "test plugin variant";
  v.family = PC_FAMILY_GATHER_CACHED_KV;
  v.dtype_mask = PLUGIN_KIND == 4 ? 0u : (1u << PC_DTYPE_FLOAT16);
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = 1;
  v.block_sizes = kBlockSizes;
  v.num_block_sizes = 1;
  v.precision.struct_size = sizeof(pc_precision);
  v.launch = &refuse;
  return host->add_variant(host->context, &v) == PC_STATUS_OK ? 0 : 1;
#endif
}
#endif
