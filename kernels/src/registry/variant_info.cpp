/// VariantInfo: declaration queries and the one call API (version-2 arguments for every
/// variant; version-1 variants get them converted).
#include <algorithm>
#include <cstring>

#include "pagecheck/registry.h"
#include "registry/abi_v1.h"
#include "registry/v1_trampolines.h"

namespace pagecheck {
namespace {

constexpr std::size_t kMessageBytes = 1024;

bool has_bit(uint32_t mask, int bit) {
  return bit >= 0 && bit < 32 && (mask & (1u << bit)) != 0;
}

/// Sets *msg from a plugin's NUL-terminated buffer (terminated here in case it did not).
pc_status with_message(pc_status status, char* buffer, std::string* msg) {
  buffer[kMessageBytes - 1] = '\0';
  if (msg != nullptr) *msg = status == PC_STATUS_OK ? std::string() : std::string(buffer);
  return status;
}

pc_status refuse(const detail::ConversionResult& r, std::string* msg) {
  if (msg != nullptr) *msg = r.message;
  return r.status;
}

/// One entry point that writes a message (can_implement, launch): clears *msg; for a version-1
/// variant converts the arguments (refusing what v1 cannot express) and returns
/// call_v1(v1 args, buffer, size), otherwise refuses NULL args and returns call_v2(buffer,
/// size); *msg comes from the buffer.
template <typename CallV1, typename CallV2>
pc_status call_entry(const VariantInfo& info, const void* args, std::string* msg, CallV1 call_v1,
                     CallV2 call_v2) {
  if (msg != nullptr) msg->clear();
  char buffer[kMessageBytes];
  buffer[0] = '\0';
  if (info.abi_version == PAGECHECK_PLUGIN_ABI_VERSION_1) {
    detail::ArgsV1 v1;
    const detail::ConversionResult r = detail::to_v1(info.variant.family, args, &v1);
    if (r.status != PC_STATUS_OK) return refuse(r, msg);
    return with_message(call_v1(v1.of(info.variant.family), buffer, sizeof buffer), buffer, msg);
  }
  if (args == nullptr) return refuse({PC_STATUS_INVALID_ARGUMENT, "args is NULL"}, msg);
  return with_message(call_v2(buffer, sizeof buffer), buffer, msg);
}

}  // namespace

bool VariantInfo::supports(pc_dtype dtype, int64_t head_size, int64_t block_size) const {
  if (!has_bit(variant.dtype_mask, static_cast<int>(dtype))) return false;
  const bool head_ok =
      std::find(head_sizes.begin(), head_sizes.end(), head_size) != head_sizes.end();
  const bool block_ok =
      std::find(block_sizes.begin(), block_sizes.end(), block_size) != block_sizes.end();
  return head_ok && block_ok;
}

bool VariantInfo::supports_kv_dtype(pc_dtype dtype, pc_dtype kv_dtype) const {
  if (variant.kv_dtype_mask == 0) return kv_dtype == dtype;
  return has_bit(variant.kv_dtype_mask, static_cast<int>(kv_dtype));
}

bool VariantInfo::supports_cache_kind(pc_cache_kind kind) const {
  if (variant.cache_kind_mask == 0) return kind == PC_CACHE_X_SPLIT;
  return has_bit(variant.cache_kind_mask, static_cast<int>(kind));
}

bool VariantInfo::supports_scale_kind(pc_scale_kind kind) const {
  if (variant.scale_kind_mask == 0) return kind == PC_SCALE_NONE;
  return has_bit(variant.scale_kind_mask, static_cast<int>(kind));
}

pc_status VariantInfo::can_implement(const pc_device_info& device, const void* args,
                                     std::string* msg) const {
  return call_entry(
      *this, args, msg,
      [&](const void* v1, char* buffer, std::size_t size) {
        if (variant_v1.can_implement == nullptr) return PC_STATUS_OK;
        return variant_v1.can_implement(&variant_v1, v1, buffer, size);
      },
      [&](char* buffer, std::size_t size) {
        if (variant.can_implement == nullptr) return PC_STATUS_OK;
        return variant.can_implement(&variant, &device, args, buffer, size);
      });
}

std::size_t VariantInfo::workspace_bytes(const pc_device_info& device, const void* args) const {
  if (abi_version == PAGECHECK_PLUGIN_ABI_VERSION_1) {
    if (variant_v1.workspace_bytes == nullptr) return 0;
    detail::ArgsV1 v1;
    if (detail::to_v1(variant.family, args, &v1).status != PC_STATUS_OK) return 0;
    return variant_v1.workspace_bytes(&variant_v1, v1.of(variant.family));
  }
  if (variant.workspace_bytes == nullptr || args == nullptr) return 0;
  return variant.workspace_bytes(&variant, &device, args);
}

pc_status VariantInfo::launch(const pc_device_info& device, const void* args, void* workspace,
                              void* stream, std::string* msg) const {
  return call_entry(
      *this, args, msg,
      [&](const void* v1, char* buffer, std::size_t size) {
        return variant_v1.launch(&variant_v1, v1, workspace, stream, buffer, size);
      },
      [&](char* buffer, std::size_t size) {
        return variant.launch(&variant, &device, args, workspace, stream, buffer, size);
      });
}

namespace detail {
namespace {

const VariantInfo& info_of(const pc_variant* self) {
  return *static_cast<const VariantInfo*>(self->user_data);
}

/// The caller's device, or a zeroed one when it passed NULL (version 1 never sees it).
pc_device_info device_or_empty(const pc_device_info* device) {
  if (device != nullptr) return *device;
  pc_device_info empty{};
  empty.struct_size = sizeof empty;
  return empty;
}

pc_status copy_out(pc_status status, const std::string& text, char* msg, size_t msg_len) {
  if (msg != nullptr && msg_len > 0) {
    const std::size_t n = std::min(text.size(), msg_len - 1);
    std::memcpy(msg, text.data(), n);
    msg[n] = '\0';
  }
  return status;
}

}  // namespace

pc_status v1_can_implement(const pc_variant* self, const pc_device_info* device, const void* args,
                           char* msg, size_t msg_len) {
  std::string text;
  const pc_status st = info_of(self).can_implement(device_or_empty(device), args, &text);
  return copy_out(st, text, msg, msg_len);
}

size_t v1_workspace_bytes(const pc_variant* self, const pc_device_info* device, const void* args) {
  return info_of(self).workspace_bytes(device_or_empty(device), args);
}

pc_status v1_launch(const pc_variant* self, const pc_device_info* device, const void* args,
                    void* workspace, void* stream, char* msg, size_t msg_len) {
  std::string text;
  const pc_status st =
      info_of(self).launch(device_or_empty(device), args, workspace, stream, &text);
  return copy_out(st, text, msg, msg_len);
}

}  // namespace detail
}  // namespace pagecheck
