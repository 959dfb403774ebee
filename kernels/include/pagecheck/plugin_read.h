#pragma once
/// C++ helpers for the reading side of the plugin ABI (pagecheck/plugin.h), header-only, for
/// the host and for plugins alike: the struct_size rule (a reader accepts a smaller struct,
/// whose missing fields read as zero, and never reads past struct_size) and the element size of
/// a pc_dtype.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pagecheck/plugin.h"

namespace pagecheck::abi {

/// Copy of `src` as a reader built with this header sees it: the first min(src.struct_size,
/// sizeof(T)) bytes of `src`, the rest zero. Nested structs keep their own struct_size; use
/// read() below for the argument structs, which applies the rule to them too.
template <typename T>
T read_prefix(const T& src) {
  T out;
  std::memset(static_cast<void*>(&out), 0, sizeof(T));
  std::size_t n = src.struct_size;
  if (n > sizeof(T)) n = sizeof(T);
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(&src), n);
  return out;
}

/// pc_kv_cache with the struct_size rule applied.
inline pc_kv_cache read(const pc_kv_cache& src) {
  return read_prefix(src);
}
/// pc_device_info with the struct_size rule applied.
inline pc_device_info read(const pc_device_info& src) {
  return read_prefix(src);
}
/// pc_paged_attention_args with the rule applied to it and to its cache, batch and features.
inline pc_paged_attention_args read(const pc_paged_attention_args& src) {
  pc_paged_attention_args out = read_prefix(src);
  out.cache = read_prefix(out.cache);
  out.batch = read_prefix(out.batch);
  out.features = read_prefix(out.features);
  return out;
}
/// pc_gather_args with the rule applied to it and to its cache.
inline pc_gather_args read(const pc_gather_args& src) {
  pc_gather_args out = read_prefix(src);
  out.cache = read_prefix(out.cache);
  return out;
}
/// pc_reshape_and_cache_args with the rule applied to it and to its cache.
inline pc_reshape_and_cache_args read(const pc_reshape_and_cache_args& src) {
  pc_reshape_and_cache_args out = read_prefix(src);
  out.cache = read_prefix(out.cache);
  return out;
}

/// Bytes per element of `dtype` (4, 2, 2, 1, 1), 0 for a value outside the enum.
inline int64_t dtype_bytes(pc_dtype dtype) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return 4;
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16:
      return 2;
    case PC_DTYPE_FP8_E4M3:
    case PC_DTYPE_FP8_E5M2:
      return 1;
  }
  return 0;
}

/// "float32", "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2" (the reference's names), or
/// "unknown".
inline const char* dtype_label(pc_dtype dtype) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return "float32";
    case PC_DTYPE_FLOAT16:
      return "float16";
    case PC_DTYPE_BFLOAT16:
      return "bfloat16";
    case PC_DTYPE_FP8_E4M3:
      return "fp8_e4m3";
    case PC_DTYPE_FP8_E5M2:
      return "fp8_e5m2";
  }
  return "unknown";
}

/// "x_split", "nhd", "hnd" (the reference's names), or "unknown".
inline const char* cache_kind_label(pc_cache_kind kind) {
  switch (kind) {
    case PC_CACHE_X_SPLIT:
      return "x_split";
    case PC_CACHE_NHD:
      return "nhd";
    case PC_CACHE_HND:
      return "hnd";
  }
  return "unknown";
}

}  // namespace pagecheck::abi
