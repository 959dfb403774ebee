/// run_gather_cached_kv / run_reshape_and_cache: outputs start as the caller's contents inside
/// guard zones, so untouched rows (slot -1) and out-of-range writes are both visible. A combined
/// cache is one allocation (the problem's key_cache); its value half is found by the converter.
#include <memory>
#include <stdexcept>
#include <vector>

#include "device_buffer.h"
#include "device_launch.h"
#include "pagecheck/reference/dtype.h"
#include "pagecheck/verify/abi_args.h"

namespace pagecheck::verify {

namespace {

/// Guard checks and download of the outputs when the context is still usable. `second` is NULL
/// for the value half of a combined cache.
void finish(CopyRun& run, const detail::GuardedBuffer& first, const char* first_name,
            const detail::GuardedBuffer* second, const char* second_name) {
  if (!detail::context_usable(run.outcome) ||
      run.outcome.disposition == LaunchDisposition::kNotSupported ||
      run.outcome.disposition == LaunchDisposition::kInvalid) {
    return;
  }
  std::string report = first.check_guards(first_name);
  const std::string b = second != nullptr ? second->check_guards(second_name) : std::string();
  if (!b.empty()) report += (report.empty() ? "" : "; ") + b;
  run.outcome.guards_intact = report.empty();
  run.outcome.guard_report = report;
  run.first.resize(first.size());
  first.download(run.first.data());
  if (second != nullptr) {
    run.second.resize(second->size());
    second->download(run.second.data());
  }
}

/// The slot mapping and the fp8 scales of one copy call, uploaded.
struct CopyIndices {
  detail::DeviceBuffer slots;    ///< slot_mapping
  detail::DeviceBuffer k_scale;  ///< k_scale (empty without scales)
  detail::DeviceBuffer v_scale;  ///< v_scale (empty without scales)
};

CopyIndices upload_indices(const ref::CacheCopyProblem& p) {
  return {detail::upload_vector(p.slot_mapping), detail::upload_vector(p.k_scale),
          detail::upload_vector(p.v_scale)};
}

/// The pointers of one copy call: the cache and token buffers given, the indices uploaded.
CopyPointers copy_pointers(const CopyIndices& indices, void* key_cache, void* value_cache,
                           void* key, void* value) {
  CopyPointers pointers;
  pointers.key_cache = key_cache;
  pointers.value_cache = value_cache;
  pointers.slot_mapping = indices.slots.typed<int64_t>();
  pointers.key = key;
  pointers.value = value;
  pointers.k_scale = indices.k_scale.typed<float>();
  pointers.v_scale = indices.v_scale.typed<float>();
  return pointers;
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
  const CopyIndices indices = upload_indices(p);
  detail::GuardedBuffer key(p.key.size(), options.guard_bytes, options.guard_pattern);
  detail::GuardedBuffer value(p.value.size(), options.guard_bytes, options.guard_pattern);
  key.upload(p.key.data());
  value.upload(p.value.data());

  const pc_gather_args args = gather_args(
      p, copy_pointers(indices, key_cache.get(), p.cache.combined ? nullptr : value_cache.get(),
                       key.data(), value.data()));

  CopyRun run;
  run.outcome = detail::launch_variant(variant, &args);
  finish(run, key, "key_out", &value, "value_out");
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
  const CopyIndices indices = upload_indices(p);
  detail::GuardedBuffer key_cache(p.key_cache.size(), options.guard_bytes, options.guard_pattern);
  key_cache.upload(p.key_cache.data());
  std::unique_ptr<detail::GuardedBuffer> value_cache;
  if (!p.cache.combined) {
    value_cache = std::make_unique<detail::GuardedBuffer>(p.value_cache.size(), options.guard_bytes,
                                                          options.guard_pattern);
    value_cache->upload(p.value_cache.data());
  }

  const pc_reshape_and_cache_args args =
      reshape_args(p, copy_pointers(indices, key_cache.data(),
                                    value_cache != nullptr ? value_cache->data() : nullptr,
                                    key.get(), value.get()));

  CopyRun run;
  run.outcome = detail::launch_variant(variant, &args);
  finish(run, key_cache, "key_cache", value_cache.get(), "value_cache");
  return run;
}

}  // namespace pagecheck::verify
