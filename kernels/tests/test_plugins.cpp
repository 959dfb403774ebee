// Test plugins for the registry's plugin loading, one per PLUGIN_KIND (compile definition):
//   1 good: registers one gather variant whose launch refuses (no GPU work)
//   2 wrong ABI version   3 no registration function   4 a variant that declares nothing
//   5 registers no variant   6 registration function returns an error
#include <pagecheck/plugin.h>

#include <cstdio>

#if PLUGIN_KIND == 2
extern "C" PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = 999;
#else
PAGECHECK_PLUGIN_DECLARE_ABI()
#endif

namespace {
const int32_t kHeadSizes[] = {128};
const int32_t kBlockSizes[] = {16};

pc_status refuse(const pc_variant*, const void*, void*, void*, char* msg, size_t msg_len) {
  std::snprintf(msg, msg_len, "test plugin: launch refused");
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
  pc_variant v{};
  v.name = "test_plugin_gather";
  v.description = "test plugin variant";
  v.family = PC_FAMILY_GATHER_CACHED_KV;
  v.dtype_mask = PLUGIN_KIND == 4 ? 0u : (1u << PC_DTYPE_FLOAT16);
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = 1;
  v.block_sizes = kBlockSizes;
  v.num_block_sizes = 1;
  v.launch = &refuse;
  return host->add_variant(host->context, &v) == PC_STATUS_OK ? 0 : 1;
#endif
}
#endif
