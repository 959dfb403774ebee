#pragma once
/// The functions of a version-1 variant's normalized version-2 descriptor: they take version-2
/// arguments and call VariantInfo's wrappers (self->user_data is the VariantInfo), which convert
/// the arguments to version 1 and call the plugin's own functions.
#include <cstddef>

#include "pagecheck/plugin.h"

namespace pagecheck::detail {

/// pc_variant::can_implement of a version-1 variant.
pc_status v1_can_implement(const pc_variant* self, const pc_device_info* device, const void* args,
                           char* msg, size_t msg_len);
/// pc_variant::workspace_bytes of a version-1 variant that has one.
size_t v1_workspace_bytes(const pc_variant* self, const pc_device_info* device, const void* args);
/// pc_variant::launch of a version-1 variant.
pc_status v1_launch(const pc_variant* self, const pc_device_info* device, const void* args,
                    void* workspace, void* stream, char* msg, size_t msg_len);

}  // namespace pagecheck::detail
