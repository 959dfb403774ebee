/// Registration of the planted variants through the plugin ABI (into the self-test's registry).
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"
#include "planted_kernels.h"

namespace pagecheck::verify {
namespace {

using planted::Bug;

/// What a planted variant's pc_variant::user_data points to.
struct PlantedDef {
  Bug bug;
  bool split;  ///< split-K attention kernel
};

const std::map<std::string, PlantedDef>& definitions() {
  static const std::map<std::string, PlantedDef> defs = {
      {"planted_control_v1", {Bug::kNone, false}},
      {"planted_control_v2", {Bug::kNone, true}},
      {"planted_skip_last_partial_block", {Bug::kSkipLastPartialBlock, false}},
      {"planted_context_off_by_one", {Bug::kContextOffByOne, false}},
      {"planted_wrong_kv_head_gqa", {Bug::kWrongKvHeadGqa, false}},
      {"planted_other_seq_block_table_row", {Bug::kOtherSeqBlockTableRow, false}},
      {"planted_scale_twice", {Bug::kScaleTwice, false}},
      {"planted_scale_missing", {Bug::kScaleMissing, false}},
      {"planted_partition_max_only", {Bug::kPartitionMaxOnly, true}},
      {"planted_zero_weight_nan", {Bug::kZeroWeightNan, false}},
      {"planted_offset_32bit", {Bug::kOffset32, false}},
      {"planted_missing_syncthreads", {Bug::kMissingSyncthreads, false}},
      {"planted_race_atomic_values", {Bug::kAtomicValueRace, false}},
      {"planted_control_gather", {Bug::kNone, false}},
      {"planted_gather_reads_slot_minus1", {Bug::kGatherSlotMinus1, false}},
      {"planted_gather_x_split_offset", {Bug::kGatherXSplitOffset, false}},
      {"planted_control_reshape", {Bug::kNone, false}},
      {"planted_reshape_writes_slot_minus1", {Bug::kReshapeSlotMinus1, false}},
  };
  return defs;
}

const PlantedDef& def_of(const pc_variant* self) {
  return *static_cast<const PlantedDef*>(self->user_data);
}

pc_status fail(char* msg, size_t len, const char* text, pc_status status) {
  if (msg != nullptr && len > 0) std::snprintf(msg, len, "%s", text);
  return status;
}

pc_status attention_can_implement(const pc_variant* self, const void* args, char* msg, size_t len) {
  const auto* a = static_cast<const pc_paged_attention_args*>(args);
  if (a->num_seqs > 65535 || a->num_heads > 65535) {
    return fail(msg, len, "more than 65535 sequences or heads", PC_STATUS_UNSUPPORTED);
  }
  if (!def_of(self).split && a->max_context_len > planted::planted_max_context()) {
    return fail(msg, len, "context longer than the shared-memory logits buffer",
                PC_STATUS_UNSUPPORTED);
  }
  return PC_STATUS_OK;
}

size_t attention_workspace(const pc_variant* self, const void* args) {
  return planted::planted_attention_workspace(*static_cast<const pc_paged_attention_args*>(args),
                                              def_of(self).split);
}

pc_status attention_launch(const pc_variant* self, const void* args, void* workspace, void* stream,
                           char* msg, size_t len) {
  const char* err =
      planted::launch_planted_attention(*static_cast<const pc_paged_attention_args*>(args),
                                        def_of(self).bug, def_of(self).split, workspace, stream);
  return err[0] == '\0' ? PC_STATUS_OK : fail(msg, len, err, PC_STATUS_CUDA_ERROR);
}

pc_status copy_can_implement(const pc_variant*, const void* args, char* msg, size_t len) {
  // num_tokens is the first int64 after the dtype in both copy argument structs.
  const auto* g = static_cast<const pc_gather_args*>(args);
  if (g->num_tokens > 0x7fffffff) return fail(msg, len, "too many tokens", PC_STATUS_UNSUPPORTED);
  return PC_STATUS_OK;
}

pc_status gather_launch(const pc_variant* self, const void* args, void*, void* stream, char* msg,
                        size_t len) {
  const char* err = planted::launch_planted_gather(*static_cast<const pc_gather_args*>(args),
                                                   def_of(self).bug, stream);
  return err[0] == '\0' ? PC_STATUS_OK : fail(msg, len, err, PC_STATUS_CUDA_ERROR);
}

pc_status reshape_launch(const pc_variant* self, const void* args, void*, void* stream, char* msg,
                         size_t len) {
  const char* err = planted::launch_planted_reshape(
      *static_cast<const pc_reshape_and_cache_args*>(args), def_of(self).bug, stream);
  return err[0] == '\0' ? PC_STATUS_OK : fail(msg, len, err, PC_STATUS_CUDA_ERROR);
}

constexpr int32_t kHeadSizes[] = {64, 80, 96, 112, 128, 192, 256};
constexpr int32_t kBlockSizes[] = {8, 16, 32};

}  // namespace

bool planted_variants_available() {
  return true;
}

void register_planted_variants(VariantRegistry& registry) {
  for (const PlantedVariant& p : planted_catalogue()) {
    const PlantedDef& def = definitions().at(p.name);
    pc_variant v{};
    v.name = p.name.c_str();
    v.description = p.description.c_str();
    v.family = p.family;
    v.dtype_mask = 0x7u;
    v.head_sizes = kHeadSizes;
    v.num_head_sizes = static_cast<int32_t>(std::size(kHeadSizes));
    v.block_sizes = kBlockSizes;
    v.num_block_sizes = static_cast<int32_t>(std::size(kBlockSizes));
    v.caps = PC_CAP_ALIBI | PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE;
    // The large-cache case runs where it matters: the 64-bit control and the 32-bit bug.
    if (p.name == "planted_control_v1" || p.name == "planted_offset_32bit") {
      v.caps |= PC_CAP_LARGE_CACHE;
    }
    v.user_data = const_cast<PlantedDef*>(&def);
    if (p.family == PC_FAMILY_PAGED_ATTENTION) {
      v.can_implement = attention_can_implement;
      v.workspace_bytes = attention_workspace;
      v.launch = attention_launch;
    } else {
      v.can_implement = copy_can_implement;
      v.launch = p.family == PC_FAMILY_GATHER_CACHED_KV ? gather_launch : reshape_launch;
    }
    registry.add(v, "planted");
  }
}

}  // namespace pagecheck::verify
