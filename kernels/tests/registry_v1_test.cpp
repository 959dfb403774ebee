// ABI version 1 through the registry (CPU only): a plugin built against pagecheck/plugin_v1.h
// loads, its caps translate to version-2 caps, and VariantInfo's wrappers convert version-2
// arguments to version-1 arguments field by field (the plugin records what it receives) or
// refuse what v1 cannot express without calling the plugin.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>

#include "pagecheck/registry.h"

namespace {

using pagecheck::VariantInfo;
using pagecheck::VariantRegistry;

using RecordedFn = int (*)(int family, void* out, size_t bytes);

/// The test plugin's record of its last call, read through its exported function.
class Recorder {
 public:
  Recorder() {
    handle_ = dlopen(TEST_PLUGIN_V1, RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr)
      fn_ = reinterpret_cast<RecordedFn>(dlsym(handle_, "pagecheck_test_v1_recorded"));
  }
  ~Recorder() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  bool ok() const { return fn_ != nullptr; }
  int calls() const { return fn_(0, nullptr, 0); }
  template <typename T>
  T last(pc_family family) const {
    T out{};
    fn_(family, &out, sizeof out);
    return out;
  }

 private:
  void* handle_ = nullptr;
  RecordedFn fn_ = nullptr;
};

pc_device_info test_device() {
  pc_device_info d{};
  d.struct_size = sizeof d;
  d.sm_count = 132;
  d.max_shared_per_block = 232448;
  return d;
}

/// Fresh random values (seed printed on failure) for every field of the version-2 structs.
struct Random {
  std::mt19937_64 rng;
  uint64_t seed;
  Random() : seed(std::random_device{}()) { rng.seed(seed); }
  int64_t positive() { return static_cast<int64_t>(rng() % 100000) + 1; }
  template <typename T>
  T* pointer() {
    return reinterpret_cast<T*>(static_cast<uintptr_t>((rng() | 0x100) & ~uint64_t{0xF}));
  }
};

/// An x-split cache of `dtype` that version 1 can express, every stride random.
pc_kv_cache v1_cache(Random& r, pc_dtype dtype) {
  pc_kv_cache c{};
  c.struct_size = sizeof c;
  c.kind = PC_CACHE_X_SPLIT;
  c.dtype = dtype;
  c.scale_kind = PC_SCALE_NONE;
  c.num_blocks = r.positive();
  c.num_kv_heads = r.positive();
  c.head_size = 128;
  c.block_size = 16;
  c.key = {
      r.positive(), r.positive(), r.positive(), r.positive(), 1, dtype == PC_DTYPE_FLOAT32 ? 4 : 8};
  c.value = {r.positive(), r.positive(), 1, 0, r.positive(), c.head_size};
  return c;
}

pc_paged_attention_args v1_attention(Random& r) {
  pc_paged_attention_args a{};
  a.struct_size = sizeof a;
  a.dtype = r.rng() % 2 ? PC_DTYPE_FLOAT16 : PC_DTYPE_BFLOAT16;
  a.num_heads = r.positive();
  a.scale = static_cast<float>(r.positive()) / 1000.0f;
  a.query = r.pointer<const void>();
  a.query_stride_token = r.positive();
  a.query_stride_head = r.positive();
  a.key_cache = r.pointer<const void>();
  a.value_cache = r.pointer<const void>();
  a.cache = v1_cache(r, a.dtype);
  pc_ragged_batch& b = a.batch;
  b.struct_size = sizeof b;
  b.num_seqs = r.positive();
  b.num_query_tokens = b.num_seqs;
  b.max_query_len = 1;
  b.query_start = nullptr;
  b.context_lens = r.pointer<const int32_t>();
  b.block_table = r.pointer<const int32_t>();
  b.block_table_stride = r.positive();
  b.max_blocks_per_seq = r.positive();
  b.max_context_len = r.positive();
  a.features.struct_size = sizeof a.features;
  a.features.alibi_slopes = r.pointer<const float>();
  a.features.causal = static_cast<int32_t>(r.rng() % 2);  // irrelevant at one token per sequence
  a.out = r.pointer<void>();
  a.out_stride_token = r.positive();
  a.out_stride_head = r.positive();
  return a;
}

void expect_cache(const pc_cache_layout_v1& v, const pc_kv_cache& c) {
  // One tuple per side: a failure prints both, field by field.
  EXPECT_EQ(std::tie(v.num_blocks, v.num_kv_heads, v.head_size, v.block_size, v.x,
                     v.key_stride_block, v.key_stride_head, v.key_stride_group, v.key_stride_slot,
                     v.value_stride_block, v.value_stride_head, v.value_stride_dim),
            std::tie(c.num_blocks, c.num_kv_heads, c.head_size, c.block_size, c.key.dim_split,
                     c.key.block, c.key.head, c.key.group, c.key.slot, c.value.block, c.value.head,
                     c.value.dim));
}

/// The fields both copy families share, version 1 `v` against the current `a`: dtype, token
/// count, cache pointers and layout, slot mapping and the token-side strides.
template <class V1, class Args>
void expect_copy_fields(const V1& v, const Args& a) {
  EXPECT_EQ(
      std::tie(v.dtype, v.num_tokens, v.key_cache, v.value_cache, v.slot_mapping,
               v.key_stride_token, v.key_stride_head, v.value_stride_token, v.value_stride_head),
      std::tie(a.dtype, a.num_tokens, a.key_cache, a.value_cache, a.slot_mapping,
               a.key_stride_token, a.key_stride_head, a.value_stride_token, a.value_stride_head));
  expect_cache(v.cache, a.cache);
}

class RegistryV1 : public ::testing::Test {
 protected:
  void SetUp() override {
    registry.load_plugin(TEST_PLUGIN_V1);
    ASSERT_TRUE(recorder.ok()) << dlerror();
  }
  const VariantInfo& variant(pc_family family, const char* name) {
    const VariantInfo* v = registry.find(family, name);
    EXPECT_NE(v, nullptr) << name;
    return *v;
  }
  /// `out`: the version-1 arguments the plugin's `name` of `family` received when the registry
  /// translated `args` for can_implement, which must accept them.
  template <class V1, class Args>
  void translate(pc_family family, const char* name, const Args& args, V1& out) {
    std::string msg;
    ASSERT_EQ(variant(family, name).can_implement(test_device(), &args, &msg), PC_STATUS_OK) << msg;
    out = recorder.last<V1>(family);
  }
  VariantRegistry registry;
  Recorder recorder;
  Random random;
};

TEST_F(RegistryV1, LoadsAndTranslatesItsDeclaration) {
  const VariantInfo& a = variant(PC_FAMILY_PAGED_ATTENTION, "v1_attention");
  EXPECT_EQ(a.abi_version, 1);
  EXPECT_EQ(a.origin, TEST_PLUGIN_V1);
  EXPECT_EQ(a.variant.struct_size, sizeof(pc_variant));
  EXPECT_EQ(a.variant.caps, uint64_t{PC_CAP_ALIBI | PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE |
                                     PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD |
                                     PC_CAP_CACHE_PAD_SHARED | PC_CAP_LARGE_CACHE});
  EXPECT_EQ(variant(PC_FAMILY_GATHER_CACHED_KV, "v1_gather").variant.caps,
            uint64_t{PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT});
  EXPECT_EQ(variant(PC_FAMILY_RESHAPE_AND_CACHE, "v1_reshape").variant.caps,
            uint64_t{PC_CAP_CACHE_PAD | PC_CAP_CACHE_PAD_SHARED});
  EXPECT_EQ(a.variant.dtype_mask, (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16));
  EXPECT_TRUE(a.supports(PC_DTYPE_BFLOAT16, 64, 32));
  EXPECT_FALSE(a.supports(PC_DTYPE_FLOAT32, 64, 32));
  EXPECT_TRUE(a.supports_kv_dtype(PC_DTYPE_FLOAT16, PC_DTYPE_FLOAT16));
  EXPECT_FALSE(a.supports_kv_dtype(PC_DTYPE_FLOAT16, PC_DTYPE_FP8_E4M3));
  EXPECT_TRUE(a.supports_cache_kind(PC_CACHE_X_SPLIT));
  EXPECT_FALSE(a.supports_cache_kind(PC_CACHE_NHD));
  EXPECT_FALSE(a.supports_cache_kind(PC_CACHE_HND));
  EXPECT_TRUE(a.supports_scale_kind(PC_SCALE_NONE));
  EXPECT_FALSE(a.supports_scale_kind(PC_SCALE_PER_TENSOR));
  EXPECT_EQ(a.max_query_len(), 1);
  EXPECT_EQ(a.variant.num_partition_sizes, 0);
  EXPECT_EQ(a.variant.precision.qk_accum, PC_ACCUM_FLOAT32);
  EXPECT_EQ(a.variant.precision.rounded, 0u);
  EXPECT_EQ(a.variant.context0, PC_CONTEXT0_UNSUPPORTED);
  EXPECT_FALSE(a.nondeterministic());
  // The plugin's own descriptor is kept, with the registry's copies of its strings.
  EXPECT_STREQ(a.variant_v1.name, "v1_attention");
  EXPECT_EQ(a.variant_v1.caps, uint32_t{PC_V1_CAP_ALIBI | PC_V1_CAP_STRIDED_TOKENS |
                                        PC_V1_CAP_PADDED_CACHE | PC_V1_CAP_LARGE_CACHE});
}

TEST_F(RegistryV1, AttentionArgumentsConvertFieldByField) {
  SCOPED_TRACE("seed " + std::to_string(random.seed));
  const VariantInfo& info = variant(PC_FAMILY_PAGED_ATTENTION, "v1_attention");
  const pc_paged_attention_args a = v1_attention(random);
  const int before = recorder.calls();
  std::string msg;
  ASSERT_EQ(info.can_implement(test_device(), &a, &msg), PC_STATUS_OK) << msg;
  ASSERT_EQ(recorder.calls(), before + 1);
  const auto v = recorder.last<pc_paged_attention_args_v1>(PC_FAMILY_PAGED_ATTENTION);
  EXPECT_EQ(std::tie(v.dtype, v.num_seqs, v.num_heads, v.max_blocks_per_seq, v.max_context_len,
                     v.scale, v.query, v.query_stride_seq, v.query_stride_head, v.key_cache,
                     v.value_cache, v.block_table, v.block_table_stride, v.context_lens,
                     v.alibi_slopes, v.out, v.out_stride_seq, v.out_stride_head),
            std::tie(a.dtype, a.batch.num_seqs, a.num_heads, a.batch.max_blocks_per_seq,
                     a.batch.max_context_len, a.scale, a.query, a.query_stride_token,
                     a.query_stride_head, a.key_cache, a.value_cache, a.batch.block_table,
                     a.batch.block_table_stride, a.batch.context_lens, a.features.alibi_slopes,
                     a.out, a.out_stride_token, a.out_stride_head));
  expect_cache(v.cache, a.cache);

  // workspace_bytes and launch get the same conversion; launch's message comes back.
  EXPECT_EQ(info.workspace_bytes(test_device(), &a), 4096u);
  void* workspace = random.pointer<void>();
  void* stream = random.pointer<void>();
  EXPECT_EQ(info.launch(test_device(), &a, workspace, stream, &msg), PC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("v1 plugin: launched"), std::string::npos) << msg;
  EXPECT_EQ(recorder.calls(), before + 3);
  const auto w = recorder.last<pc_paged_attention_args_v1>(PC_FAMILY_PAGED_ATTENTION);
  EXPECT_EQ(std::memcmp(&v, &w, sizeof v), 0);

  // The normalized descriptor's own functions route through the same conversion.
  char buffer[256] = {};
  const pc_device_info device = test_device();
  EXPECT_EQ(info.variant.can_implement(&info.variant, &device, &a, buffer, sizeof buffer),
            PC_STATUS_OK);
  EXPECT_EQ(recorder.calls(), before + 4);
}

TEST_F(RegistryV1, CopyArgumentsConvertFieldByField) {
  SCOPED_TRACE("seed " + std::to_string(random.seed));
  pc_gather_args g{};
  g.struct_size = sizeof g;
  g.dtype = PC_DTYPE_BFLOAT16;
  g.num_tokens = random.positive();
  g.key_cache = random.pointer<const void>();
  g.value_cache = random.pointer<const void>();
  g.cache = v1_cache(random, g.dtype);
  g.slot_mapping = random.pointer<const int64_t>();
  g.key_out = random.pointer<void>();
  g.key_stride_token = random.positive();
  g.key_stride_head = random.positive();
  g.value_out = random.pointer<void>();
  g.value_stride_token = random.positive();
  g.value_stride_head = random.positive();
  pc_gather_args_v1 gv{};
  ASSERT_NO_FATAL_FAILURE(translate(PC_FAMILY_GATHER_CACHED_KV, "v1_gather", g, gv));
  expect_copy_fields(gv, g);
  EXPECT_EQ(std::tie(gv.key_out, gv.value_out), std::tie(g.key_out, g.value_out));

  pc_reshape_and_cache_args s{};
  s.struct_size = sizeof s;
  s.dtype = PC_DTYPE_FLOAT16;
  s.num_tokens = random.positive();
  s.key = random.pointer<const void>();
  s.key_stride_token = random.positive();
  s.key_stride_head = random.positive();
  s.value = random.pointer<const void>();
  s.value_stride_token = random.positive();
  s.value_stride_head = random.positive();
  s.key_cache = random.pointer<void>();
  s.value_cache = random.pointer<void>();
  s.cache = v1_cache(random, s.dtype);
  s.slot_mapping = random.pointer<const int64_t>();
  pc_reshape_and_cache_args_v1 sv{};
  ASSERT_NO_FATAL_FAILURE(translate(PC_FAMILY_RESHAPE_AND_CACHE, "v1_reshape", s, sv));
  expect_copy_fields(sv, s);
  EXPECT_EQ(std::tie(sv.key, sv.value), std::tie(s.key, s.value));
}

TEST_F(RegistryV1, RefusesWhatVersionOneCannotExpress) {
  SCOPED_TRACE("seed " + std::to_string(random.seed));
  const VariantInfo& info = variant(PC_FAMILY_PAGED_ATTENTION, "v1_attention");
  struct Case {
    const char* expected;
    void (*change)(pc_paged_attention_args&);
  };
  const Case cases[] = {
      {"NHD caches",
       [](pc_paged_attention_args& a) {
         a.cache.kind = PC_CACHE_NHD;
         a.cache.key = {a.cache.key.block, a.cache.head_size, 1, 0, 1, a.cache.head_size};
       }},
      {"HND caches", [](pc_paged_attention_args& a) { a.cache.kind = PC_CACHE_HND; }},
      {"fp8_e4m3 caches", [](pc_paged_attention_args& a) { a.cache.dtype = PC_DTYPE_FP8_E4M3; }},
      {"one dtype for every tensor",
       [](pc_paged_attention_args& a) {
         a.cache.dtype = a.dtype == PC_DTYPE_FLOAT16 ? PC_DTYPE_BFLOAT16 : PC_DTYPE_FLOAT16;
       }},
      {"cache scales",
       [](pc_paged_attention_args& a) { a.cache.scale_kind = PC_SCALE_PER_TENSOR; }},
      {"combined K/V", [](pc_paged_attention_args& a) { a.cache.combined = 1; }},
      {"key dim groups", [](pc_paged_attention_args& a) { a.cache.key.dim_split = 4; }},
      {"value slot stride", [](pc_paged_attention_args& a) { a.cache.value.slot = 2; }},
      {"more than one query token",
       [](pc_paged_attention_args& a) {
         a.batch.query_start = a.batch.context_lens;
         a.batch.num_query_tokens = 2 * a.batch.num_seqs;
         a.batch.max_query_len = 2;
       }},
      {"more than one query token", [](pc_paged_attention_args& a) { a.batch.max_query_len = 3; }},
      {"sinks", [](pc_paged_attention_args& a) { a.features.sinks = a.features.alibi_slopes; }},
      {"sliding window", [](pc_paged_attention_args& a) { a.features.window = 128; }},
      {"soft-cap", [](pc_paged_attention_args& a) { a.features.soft_cap = 30.0f; }},
  };
  const int before = recorder.calls();
  for (const Case& c : cases) {
    pc_paged_attention_args a = v1_attention(random);
    c.change(a);
    std::string msg;
    EXPECT_EQ(info.can_implement(test_device(), &a, &msg), PC_STATUS_UNSUPPORTED) << c.expected;
    EXPECT_NE(msg.find("ABI v1 variant: cannot express"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    EXPECT_EQ(info.launch(test_device(), &a, nullptr, nullptr, &msg), PC_STATUS_UNSUPPORTED);
    EXPECT_EQ(info.workspace_bytes(test_device(), &a), 0u);
  }
  EXPECT_EQ(recorder.calls(), before);  // the plugin never saw them

  pc_paged_attention_args malformed = v1_attention(random);
  malformed.batch.struct_size = 0;
  std::string msg;
  EXPECT_EQ(info.can_implement(test_device(), &malformed, &msg), PC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("batch.struct_size"), std::string::npos) << msg;

  pc_gather_args g{};
  g.struct_size = sizeof g;
  g.dtype = PC_DTYPE_FLOAT16;
  g.dequantize = 1;
  g.cache = v1_cache(random, g.dtype);
  EXPECT_EQ(variant(PC_FAMILY_GATHER_CACHED_KV, "v1_gather").can_implement(test_device(), &g, &msg),
            PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("dequantizing gather"), std::string::npos) << msg;
  g.dequantize = 0;
  g.dtype = PC_DTYPE_FP8_E5M2;
  g.cache = v1_cache(random, PC_DTYPE_FP8_E5M2);
  EXPECT_EQ(variant(PC_FAMILY_GATHER_CACHED_KV, "v1_gather").can_implement(test_device(), &g, &msg),
            PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("fp8_e5m2 tokens"), std::string::npos) << msg;
  EXPECT_EQ(recorder.calls(), before);
}

TEST(RegistryV1Layout, TheFrozenStructsKeepTheirVersionOneSizes) {
  // Sizes of ABI version 1 on LP64 (x86-64, aarch64): a change breaks every v1 plugin.
  static_assert(sizeof(void*) == 8, "LP64 only");
  EXPECT_EQ(sizeof(pc_cache_layout_v1), 96u);
  EXPECT_EQ(sizeof(pc_paged_attention_args_v1), 240u);
  EXPECT_EQ(sizeof(pc_gather_args_v1), 184u);
  EXPECT_EQ(sizeof(pc_reshape_and_cache_args_v1), 184u);
  EXPECT_EQ(sizeof(pc_variant_v1), 88u);
  EXPECT_EQ(sizeof(pc_host_v1), 24u);
  EXPECT_EQ(offsetof(pc_paged_attention_args_v1, cache), 88u);
  EXPECT_EQ(offsetof(pc_variant_v1, user_data), 80u);
  // A version-1 plugin calls its add_variant through the host's add_variant_v1.
  EXPECT_EQ(offsetof(pc_host, add_variant_v1), offsetof(pc_host_v1, add_variant));
}

}  // namespace
