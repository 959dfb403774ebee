#pragma once
/// Shared support of the built-in declaration tests (builtin_declaration_test.cpp and
/// gqa_declaration_test.cpp): an H200's device info, fake aligned device pointers, the skeleton
/// of a valid attention call and a fixture holding the built-in variants. CPU only: nothing here
/// touches a device.
#include <gtest/gtest.h>

#include <cstdint>

#include "pagecheck/registry.h"

namespace pagecheck::declaration_test {

/// The device info of an H200: 132 SMs, compute capability 9, 227 KiB of shared memory a block,
/// 60 MiB of L2 (the shared-memory limit spares can_implement a device query).
inline pc_device_info h200() {
  pc_device_info d{};
  d.struct_size = sizeof d;
  d.sm_count = 132;
  d.cc_major = 9;
  d.max_shared_per_block = 232448;
  d.l2_bytes = 60 << 20;
  return d;
}

/// A fake device pointer `n` pages of 4 KiB in: aligned for every access, never dereferenced.
inline const void* aligned(uintptr_t n) {
  return reinterpret_cast<const void*>(n << 12);
}

/// What the valid attention calls of both tests share: float16 queries of `num_heads` heads and
/// logit scale `scale`, packed query and output rows, 2 kv heads of head size 128 in a pool of 64
/// blocks of 16 slots, block-table rows of 16 entries, contexts of at most 200 tokens, causal.
/// The caller sets the cache layout and dtype, the batch's sizes and any further feature.
inline pc_paged_attention_args attention_skeleton(int64_t num_heads, float scale) {
  pc_paged_attention_args a{};
  a.struct_size = sizeof a;
  a.dtype = PC_DTYPE_FLOAT16;
  a.num_heads = num_heads;
  a.scale = scale;
  a.query = aligned(1);
  a.query_stride_token = num_heads * 128;
  a.query_stride_head = 128;
  a.key_cache = aligned(2);
  a.value_cache = aligned(3);
  pc_kv_cache& c = a.cache;
  c.struct_size = sizeof c;
  c.num_blocks = 64;
  c.num_kv_heads = 2;
  c.head_size = 128;
  c.block_size = 16;
  pc_ragged_batch& b = a.batch;
  b.struct_size = sizeof b;
  b.context_lens = static_cast<const int32_t*>(aligned(4));
  b.block_table = static_cast<const int32_t*>(aligned(5));
  b.block_table_stride = 16;
  b.max_blocks_per_seq = 16;
  b.max_context_len = 200;
  a.features.struct_size = sizeof a.features;
  a.features.causal = 1;
  a.out = const_cast<void*>(aligned(6));
  a.out_stride_token = num_heads * 128;
  a.out_stride_head = 128;
  return a;
}

/// Makes `a` a batch of 3 sequences of up to 4 new tokens (9 rows through query_start,
/// aligned(9)) with sinks (aligned(10)), a window of 64 and a soft-cap of 30.
inline void three_sequences_with_features(pc_paged_attention_args& a) {
  pc_ragged_batch& b = a.batch;
  b.num_seqs = 3;
  b.num_query_tokens = 9;
  b.max_query_len = 4;
  b.query_start = static_cast<const int32_t*>(aligned(9));
  pc_attention_features& f = a.features;
  f.sinks = static_cast<const float*>(aligned(10));
  f.window = 64;
  f.soft_cap = 30.f;
}

/// A change to a valid attention call that can_implement must refuse.
struct AttentionRefusal {
  pc_status status;                          ///< the expected status
  const char* expected;                      ///< a part of the expected message
  void (*change)(pc_paged_attention_args&);  ///< what makes the call invalid or unsupported
};

/// A packed x-split float16 cache of the skeleton's geometry (2 kv heads, head 128, block 16,
/// x = 8): keys [block, head, dim / 8, slot, 8], values [block, head, dim, slot].
inline void packed_x_split_float16(pc_kv_cache& c) {
  c.kind = PC_CACHE_X_SPLIT;
  c.dtype = PC_DTYPE_FLOAT16;
  c.key = {2 * 128 * 16, 128 * 16, 8, 16 * 8, 1, 8};
  c.value = {2 * 128 * 16, 128 * 16, 1, 0, 16, 128};
}

/// A registry of the built-in variants; skips the test in a build without the CUDA kernels.
class BuiltinRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!builtin_kernels_available()) GTEST_SKIP() << "no CUDA kernels in this build";
    register_builtin_kernels(registry);
  }
  VariantRegistry registry;  ///< the built-in variants
};

}  // namespace pagecheck::declaration_test
