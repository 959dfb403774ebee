/// run_gather_cached_kv / run_reshape_and_cache: outputs start as the caller's contents inside
/// guard zones, so untouched rows (slot -1) and out-of-range writes are both visible.
#include <stdexcept>
#include <vector>

#include "device_buffer.h"
#include "device_launch.h"
#include "pagecheck/reference/dtype.h"

namespace pagecheck::verify {

namespace {

pc_cache_layout to_pc(const ref::PagedCacheLayout& c) {
  return pc_cache_layout{c.num_blocks,
                         c.num_kv_heads,
                         c.head_size,
                         c.block_size,
                         c.x,
                         c.key_stride_block,
                         c.key_stride_head,
                         c.key_stride_group,
                         c.key_stride_slot,
                         c.value_stride_block,
                         c.value_stride_head,
                         c.value_stride_dim};
}

/// Guard checks and download of both outputs when the context is still usable.
void finish(CopyRun& run, const detail::GuardedBuffer& first, const char* first_name,
            const detail::GuardedBuffer& second, const char* second_name) {
  if (!detail::context_usable(run.outcome) ||
      run.outcome.disposition == LaunchDisposition::kNotSupported ||
      run.outcome.disposition == LaunchDisposition::kInvalid) {
    return;
  }
  std::string report = first.check_guards(first_name);
  const std::string b = second.check_guards(second_name);
  if (!b.empty()) report += (report.empty() ? "" : "; ") + b;
  run.outcome.guards_intact = report.empty();
  run.outcome.guard_report = report;
  run.first.resize(first.size());
  run.second.resize(second.size());
  first.download(run.first.data());
  second.download(run.second.data());
}

}  // namespace

CopyRun run_gather_cached_kv(const VariantInfo& variant, const ref::CacheCopyProblem& p,
                             const DeviceRunOptions& options) {
  detail::require_device();
  detail::require_family(variant, PC_FAMILY_GATHER_CACHED_KV);
  p.validate();
  using detail::upload_new;
  const detail::DeviceBuffer key_cache = upload_new(p.key_cache.data(), p.key_cache.size());
  const detail::DeviceBuffer value_cache = upload_new(p.value_cache.data(), p.value_cache.size());
  const detail::DeviceBuffer slots =
      upload_new(p.slot_mapping.data(), p.slot_mapping.size() * sizeof(int64_t));
  detail::GuardedBuffer key(p.key.size(), options.guard_bytes, options.guard_pattern);
  detail::GuardedBuffer value(p.value.size(), options.guard_bytes, options.guard_pattern);
  key.upload(p.key.data());
  value.upload(p.value.data());

  pc_gather_args args{};
  args.dtype = static_cast<pc_dtype>(p.dtype);
  args.num_tokens = p.num_tokens();
  args.key_cache = key_cache.get();
  args.value_cache = value_cache.get();
  args.cache = to_pc(p.cache);
  args.slot_mapping = static_cast<const int64_t*>(slots.get());
  args.key_out = key.data();
  args.key_stride_token = p.key_layout.stride_token;
  args.key_stride_head = p.key_layout.stride_head;
  args.value_out = value.data();
  args.value_stride_token = p.value_layout.stride_token;
  args.value_stride_head = p.value_layout.stride_head;

  CopyRun run;
  run.outcome = detail::launch_variant(variant, &args);
  finish(run, key, "key_out", value, "value_out");
  return run;
}

CopyRun run_reshape_and_cache(const VariantInfo& variant, const ref::CacheCopyProblem& p,
                              const DeviceRunOptions& options) {
  detail::require_device();
  detail::require_family(variant, PC_FAMILY_RESHAPE_AND_CACHE);
  p.validate();
  using detail::upload_new;
  const detail::DeviceBuffer key = upload_new(p.key.data(), p.key.size());
  const detail::DeviceBuffer value = upload_new(p.value.data(), p.value.size());
  const detail::DeviceBuffer slots =
      upload_new(p.slot_mapping.data(), p.slot_mapping.size() * sizeof(int64_t));
  detail::GuardedBuffer key_cache(p.key_cache.size(), options.guard_bytes, options.guard_pattern);
  detail::GuardedBuffer value_cache(p.value_cache.size(), options.guard_bytes,
                                    options.guard_pattern);
  key_cache.upload(p.key_cache.data());
  value_cache.upload(p.value_cache.data());

  pc_reshape_and_cache_args args{};
  args.dtype = static_cast<pc_dtype>(p.dtype);
  args.num_tokens = p.num_tokens();
  args.key = key.get();
  args.key_stride_token = p.key_layout.stride_token;
  args.key_stride_head = p.key_layout.stride_head;
  args.value = value.get();
  args.value_stride_token = p.value_layout.stride_token;
  args.value_stride_head = p.value_layout.stride_head;
  args.key_cache = key_cache.data();
  args.value_cache = value_cache.data();
  args.cache = to_pc(p.cache);
  args.slot_mapping = static_cast<const int64_t*>(slots.get());

  CopyRun run;
  run.outcome = detail::launch_variant(variant, &args);
  finish(run, key_cache, "key_cache", value_cache, "value_cache");
  return run;
}

}  // namespace pagecheck::verify
