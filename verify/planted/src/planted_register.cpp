/// Registration of the planted variants through the plugin ABI v2 (into the self-test's registry),
/// their can_implement, and the copy kernels' params filled from the version-2 arguments (the
/// attention kernels' one params: attention_params() in planted_register_features.cpp).
#include <cstring>
#include <iterator>
#include <map>
#include <string>

#include "common/host_checks.h"
#include "pagecheck/plugin_read.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"
#include "planted_kernels.h"
#include "planted_register_features.h"

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
      {"planted_table_stride_from_width", {Bug::kTableStrideFromWidth, false}},
      {"planted_finite_mask_sentinel", {Bug::kFiniteMaskSentinel, false}},
      {"planted_partitions_from_bound", {Bug::kPartitionsFromBound, true}},
      {"planted_gqa_group_le8", {Bug::kGqaGroupLe8, false}},
      {"planted_control_gather", {Bug::kNone, false}},
      {"planted_gather_reads_slot_minus1", {Bug::kGatherSlotMinus1, false}},
      {"planted_gather_x_split_offset", {Bug::kGatherXSplitOffset, false}},
      {"planted_gather_one_block_per_token", {Bug::kCopyOneBlockPerToken, false}},
      {"planted_control_reshape", {Bug::kNone, false}},
      {"planted_reshape_writes_slot_minus1", {Bug::kReshapeSlotMinus1, false}},
      {"planted_reshape_one_block_per_token", {Bug::kCopyOneBlockPerToken, false}},
  };
  return defs;
}

const PlantedDef& def_of(const pc_variant* self) {
  return *static_cast<const PlantedDef*>(self->user_data);
}

pc_status attention_can_implement(const pc_variant* self, const pc_device_info*, const void* raw,
                                  char* msg, size_t len) {
  const auto* args = static_cast<const pc_paged_attention_args*>(raw);
  if (args == nullptr) return refuse(msg, len, "args is NULL", PC_STATUS_INVALID_ARGUMENT);
  const pc_paged_attention_args a = abi::read(*args);
  const kernels::KernelStatus st =
      kernels::first_failure(kernels::require_struct_size(args->struct_size, "args"),
                             kernels::require_struct_size(a.cache.struct_size, "args.cache"),
                             kernels::require_struct_size(a.batch.struct_size, "args.batch"),
                             kernels::require_struct_size(a.features.struct_size, "args.features"));
  if (!st.ok()) return kernels::report(st, msg, len);
  kernels::KernelStatus subset = kernels::check_plain_cache(a.cache, a.dtype);
  if (subset.ok()) subset = kernels::check_decode_batch(a.batch, a.features);
  if (!subset.ok()) return kernels::report(subset, msg, len);
  if (a.batch.num_seqs > 65535 || a.num_heads > 65535) {
    return refuse(msg, len, "more than 65535 sequences or heads", PC_STATUS_UNSUPPORTED);
  }
  if (!def_of(self).split && a.batch.max_context_len > planted::planted_max_context()) {
    return refuse(msg, len, "context longer than the shared-memory logits buffer",
                  PC_STATUS_UNSUPPORTED);
  }
  return PC_STATUS_OK;
}

size_t attention_workspace(const pc_variant* self, const pc_device_info*, const void* args) {
  return planted::planted_attention_workspace(
      planted::attention_params(*static_cast<const pc_paged_attention_args*>(args)),
      def_of(self).split);
}

pc_status attention_launch(const pc_variant* self, const pc_device_info*, const void* args,
                           void* workspace, void* stream, char* msg, size_t len) {
  const char* err = planted::launch_planted_attention(
      planted::attention_params(*static_cast<const pc_paged_attention_args*>(args)),
      def_of(self).bug, def_of(self).split, workspace, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

/// can_implement of both copy directions (`args` already read with abi::read).
pc_status copy_can_implement(const pc_kv_cache& cache, pc_dtype dtype, int64_t num_tokens,
                             int32_t dequantize, char* msg, size_t len) {
  kernels::KernelStatus st = kernels::require_struct_size(cache.struct_size, "args.cache");
  if (st.ok()) st = kernels::check_plain_cache(cache, dtype);
  if (!st.ok()) return kernels::report(st, msg, len);
  if (dequantize != 0) return refuse(msg, len, "no dequantizing gather", PC_STATUS_UNSUPPORTED);
  if (num_tokens > 0x7fffffff) return refuse(msg, len, "too many tokens", PC_STATUS_UNSUPPORTED);
  return PC_STATUS_OK;
}

pc_status gather_can_implement(const pc_variant*, const pc_device_info*, const void* raw, char* msg,
                               size_t len) {
  pc_gather_args a{};
  if (const pc_status st = read_args(raw, &a, msg, len); st != PC_STATUS_OK) return st;
  return copy_can_implement(a.cache, a.dtype, a.num_tokens, a.dequantize, msg, len);
}

pc_status reshape_can_implement(const pc_variant*, const pc_device_info*, const void* raw,
                                char* msg, size_t len) {
  pc_reshape_and_cache_args a{};
  if (const pc_status st = read_args(raw, &a, msg, len); st != PC_STATUS_OK) return st;
  return copy_can_implement(a.cache, a.dtype, a.num_tokens, 0, msg, len);
}

pc_status gather_launch(const pc_variant* self, const pc_device_info*, const void* args, void*,
                        void* stream, char* msg, size_t len) {
  const char* err = planted::launch_planted_gather(
      planted::gather_params(*static_cast<const pc_gather_args*>(args)), def_of(self).bug, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

pc_status reshape_launch(const pc_variant* self, const pc_device_info*, const void* args, void*,
                         void* stream, char* msg, size_t len) {
  const char* err = planted::launch_planted_reshape(
      planted::reshape_params(*static_cast<const pc_reshape_and_cache_args*>(args)),
      def_of(self).bug, stream);
  return err[0] == '\0' ? PC_STATUS_OK : refuse(msg, len, err, PC_STATUS_CUDA_ERROR);
}

constexpr int32_t kHeadSizes[] = {64, 80, 96, 112, 128, 192, 256};
constexpr int32_t kBlockSizes[] = {8, 16, 32};
constexpr int32_t kSplitPartitionSizes[] = {static_cast<int32_t>(planted::kPlantedPartition)};
}  // namespace

namespace planted {

namespace {
CopyParams cache_side(pc_dtype dtype, int64_t num_tokens, const pc_kv_cache& c, void* key_cache,
                      void* value_cache, const int64_t* slot_mapping) {
  CopyParams p{};
  p.dtype = dtype;
  p.num_tokens = num_tokens;
  p.key_cache = key_cache;
  p.value_cache = value_cache;
  p.key_strides = c.key;
  p.value_strides = c.value;
  p.num_kv_heads = c.num_kv_heads;
  p.head_size = c.head_size;
  p.block_size = c.block_size;
  p.slot_mapping = slot_mapping;
  return p;
}
}  // namespace

CopyParams gather_params(const pc_gather_args& args) {
  const pc_gather_args a = abi::read(args);
  CopyParams p = cache_side(a.dtype, a.num_tokens, a.cache, const_cast<void*>(a.key_cache),
                            const_cast<void*>(a.value_cache), a.slot_mapping);
  p.key = a.key_out;
  p.key_stride_token = a.key_stride_token;
  p.key_stride_head = a.key_stride_head;
  p.value = a.value_out;
  p.value_stride_token = a.value_stride_token;
  p.value_stride_head = a.value_stride_head;
  return p;
}

CopyParams reshape_params(const pc_reshape_and_cache_args& args) {
  const pc_reshape_and_cache_args a = abi::read(args);
  CopyParams p =
      cache_side(a.dtype, a.num_tokens, a.cache, a.key_cache, a.value_cache, a.slot_mapping);
  p.key = const_cast<void*>(a.key);
  p.key_stride_token = a.key_stride_token;
  p.key_stride_head = a.key_stride_head;
  p.value = const_cast<void*>(a.value);
  p.value_stride_token = a.value_stride_token;
  p.value_stride_head = a.value_stride_head;
  return p;
}

}  // namespace planted

bool planted_variants_available() {
  return true;
}

void register_planted_variants(VariantRegistry& registry) {
  for (const PlantedVariant& p : planted_catalogue()) {
    if (register_feature_variant(registry, p)) continue;  // issues 15, 16: planted_features.h
    const PlantedDef& def = definitions().at(p.name);
    // The built-in variants' declaration (kernels/src/builtin_variants.cpp): a cache of the
    // token dtype, x-split without scales, decode only, no context length 0.
    uint64_t caps = p.family == PC_FAMILY_PAGED_ATTENTION ? PC_CAP_ALIBI : 0;
    // The large-cache case runs where it matters: the 64-bit control and the 32-bit bug.
    if (p.name == "planted_control_v1" || p.name == "planted_offset_32bit") {
      caps |= PC_CAP_LARGE_CACHE;
    }
    const PlantedDeclaration decl{p.family,
                                  0,
                                  planted::kXSplit,
                                  planted::kNoScales,
                                  sizes_of(kHeadSizes),
                                  sizes_of(kBlockSizes),
                                  def.split ? sizes_of(kSplitPartitionSizes) : DeclaredSizes{},
                                  caps,
                                  1,
                                  PC_CONTEXT0_UNSUPPORTED};
    add_planted(registry, p, decl, &def,
                {attention_can_implement, attention_workspace, attention_launch},
                {gather_can_implement, nullptr, gather_launch},
                {reshape_can_implement, nullptr, reshape_launch});
  }
}

}  // namespace pagecheck::verify
