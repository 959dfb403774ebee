// Registry: variant validation and plugin loading errors (CPU only).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pagecheck/registry.h"

namespace {

using pagecheck::RegistryError;
using pagecheck::VariantRegistry;

const int32_t kHeads[] = {64, 128};
const int32_t kBlocks[] = {16};

pc_status noop_launch(const pc_variant*, const pc_device_info*, const void*, void*, void*, char*,
                      size_t) {
  return PC_STATUS_OK;
}

pc_variant make_variant(const char* name) {
  pc_variant v{};
  v.struct_size = sizeof(pc_variant);
  v.name = name;
  v.description = "d";
  v.family = PC_FAMILY_PAGED_ATTENTION;
  v.dtype_mask = 1u << PC_DTYPE_FLOAT16;
  v.head_sizes = kHeads;
  v.num_head_sizes = 2;
  v.block_sizes = kBlocks;
  v.num_block_sizes = 1;
  v.precision.struct_size = sizeof(pc_precision);
  v.launch = &noop_launch;
  return v;
}

pc_device_info test_device() {
  pc_device_info d{};
  d.struct_size = sizeof d;
  d.sm_count = 132;
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const RegistryError& e) {
    return e.what();
  }
  return "";
}

/// One value each of a variant's masks accepts and one it refuses (float16 queries).
struct MaskProbe {
  pc_dtype kv_accepted;          ///< a cache dtype the variant takes
  pc_dtype kv_refused;           ///< a cache dtype it refuses
  pc_cache_kind cache_accepted;  ///< a page layout it takes
  pc_cache_kind cache_refused;   ///< a page layout it refuses
  pc_scale_kind scale_accepted;  ///< a scale kind it takes
  pc_scale_kind scale_refused;   ///< a scale kind it refuses
};

void expect_masks(const pagecheck::VariantInfo& v, const MaskProbe& m) {
  EXPECT_TRUE(v.supports_kv_dtype(PC_DTYPE_FLOAT16, m.kv_accepted));
  EXPECT_FALSE(v.supports_kv_dtype(PC_DTYPE_FLOAT16, m.kv_refused));
  EXPECT_TRUE(v.supports_cache_kind(m.cache_accepted));
  EXPECT_FALSE(v.supports_cache_kind(m.cache_refused));
  EXPECT_TRUE(v.supports_scale_kind(m.scale_accepted));
  EXPECT_FALSE(v.supports_scale_kind(m.scale_refused));
}

TEST(Registry, AddsCopiesAndFinds) {
  VariantRegistry r;
  std::string name = "v_a";
  std::vector<int32_t> parts = {256, 512};
  pc_variant v = make_variant(name.c_str());
  v.partition_sizes = parts.data();
  v.num_partition_sizes = 2;
  v.cache_kind_mask = (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
  v.kv_dtype_mask = 1u << PC_DTYPE_FP8_E4M3;
  v.scale_kind_mask = 1u << PC_SCALE_PER_KV_HEAD;
  r.add(v, "builtin");
  name = "zzz";  // the registry must own its copies
  parts = {1, 2};
  const auto* found = r.find(PC_FAMILY_PAGED_ATTENTION, "v_a");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->origin, "builtin");
  EXPECT_EQ(found->abi_version, 2);
  EXPECT_STREQ(found->variant.name, "v_a");
  EXPECT_EQ(found->partition_sizes, (std::vector<int32_t>{256, 512}));
  ASSERT_EQ(found->variant.num_partition_sizes, 2);
  EXPECT_EQ(found->variant.partition_sizes[1], 512);
  EXPECT_TRUE(found->supports(PC_DTYPE_FLOAT16, 128, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT32, 128, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT16, 80, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT16, 128, 8));
  expect_masks(*found, {PC_DTYPE_FP8_E4M3, PC_DTYPE_FLOAT16, PC_CACHE_NHD, PC_CACHE_X_SPLIT,
                        PC_SCALE_PER_KV_HEAD, PC_SCALE_NONE});
  EXPECT_EQ(r.find(PC_FAMILY_GATHER_CACHED_KV, "v_a"), nullptr);
  EXPECT_EQ(r.family(PC_FAMILY_PAGED_ATTENTION).size(), 1u);
}

TEST(Registry, ZeroMasksMeanTheDefaults) {
  VariantRegistry r;
  r.add(make_variant("plain"), "test");
  const auto* v = r.find(PC_FAMILY_PAGED_ATTENTION, "plain");
  ASSERT_NE(v, nullptr);
  expect_masks(*v, {PC_DTYPE_FLOAT16, PC_DTYPE_BFLOAT16, PC_CACHE_X_SPLIT, PC_CACHE_NHD,
                    PC_SCALE_NONE, PC_SCALE_PER_TENSOR});
  EXPECT_EQ(v->max_query_len(), 1);
  EXPECT_FALSE(v->nondeterministic());
  EXPECT_TRUE(v->partition_sizes.empty());
}

TEST(Registry, WrapperCallsTheVariantWithTheDevice) {
  VariantRegistry r;
  pc_variant v = make_variant("w");
  v.can_implement = [](const pc_variant* self, const pc_device_info* d, const void*, char* msg,
                       size_t len) {
    std::snprintf(msg, len, "%s on %d SMs", self->name, d->sm_count);
    return PC_STATUS_UNSUPPORTED;
  };
  r.add(v, "test");
  const auto* info = r.find(PC_FAMILY_PAGED_ATTENTION, "w");
  ASSERT_NE(info, nullptr);
  pc_paged_attention_args args{};
  args.struct_size = sizeof args;
  std::string msg;
  EXPECT_EQ(info->can_implement(test_device(), &args, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_EQ(msg, "w on 132 SMs");
  EXPECT_EQ(info->can_implement(test_device(), nullptr, &msg), PC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(info->launch(test_device(), &args, nullptr, nullptr, &msg), PC_STATUS_OK);
  EXPECT_EQ(msg, "");
  EXPECT_EQ(info->workspace_bytes(test_device(), &args), 0u);  // no workspace_bytes function
}

TEST(Registry, RejectsBadVariants) {
  VariantRegistry r;
  r.add(make_variant("dup"), "builtin");
  EXPECT_NE(error_of([&] { r.add(make_variant("dup"), "x.so"); }).find("already registered"),
            std::string::npos);
  pc_variant no_dtype = make_variant("no_dtype");
  no_dtype.dtype_mask = 0;
  EXPECT_NE(error_of([&] { r.add(no_dtype, "x.so"); }).find("no supported dtype"),
            std::string::npos);
  pc_variant no_heads = make_variant("no_heads");
  no_heads.num_head_sizes = 0;
  EXPECT_NE(error_of([&] { r.add(no_heads, "x.so"); }).find("no supported head size"),
            std::string::npos);
  pc_variant no_launch = make_variant("no_launch");
  no_launch.launch = nullptr;
  EXPECT_NE(error_of([&] { r.add(no_launch, "x.so"); }).find("no launch"), std::string::npos);
  pc_variant small = make_variant("small");
  small.struct_size = offsetof(pc_variant, launch);
  EXPECT_NE(error_of([&] { r.add(small, "x.so"); }).find("struct_size"), std::string::npos);
  pc_variant unknown_cap = make_variant("unknown_cap");
  unknown_cap.caps = uint64_t{1} << 40;
  EXPECT_NE(error_of([&] { r.add(unknown_cap, "x.so"); }).find("caps has bits"), std::string::npos);
  pc_variant unknown_kind = make_variant("unknown_kind");
  unknown_kind.cache_kind_mask = 1u << 7;
  EXPECT_NE(error_of([&] { r.add(unknown_kind, "x.so"); }).find("cache_kind_mask"),
            std::string::npos);
  pc_variant precision = make_variant("precision");
  precision.precision.struct_size = 0;
  precision.precision.rounded = PC_ROUND_LOGITS;
  EXPECT_NE(error_of([&] { r.add(precision, "x.so"); }).find("precision.struct_size"),
            std::string::npos);
  pc_variant parts = make_variant("parts");
  parts.num_partition_sizes = 3;
  EXPECT_NE(error_of([&] { r.add(parts, "x.so"); }).find("partition_sizes"), std::string::npos);
  pc_variant context0 = make_variant("context0");
  context0.context0 = static_cast<pc_context0>(9);
  EXPECT_NE(error_of([&] { r.add(context0, "x.so"); }).find("context0"), std::string::npos);
  EXPECT_EQ(r.variants().size(), 1u);
}

TEST(Registry, FamilyNamesRoundTrip) {
  for (pc_family f :
       {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    EXPECT_EQ(pagecheck::parse_family(pagecheck::family_name(f)), f);
  }
  EXPECT_THROW(pagecheck::parse_family("attention"), std::invalid_argument);
}

TEST(PluginLoading, GoodPluginRegistersItsVariant) {
  VariantRegistry r;
  r.load_plugin(TEST_PLUGIN_GOOD);
  const auto* v = r.find(PC_FAMILY_GATHER_CACHED_KV, "test_plugin_gather");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->origin, TEST_PLUGIN_GOOD);
  EXPECT_EQ(v->abi_version, 2);
  pc_gather_args args{};
  args.struct_size = sizeof args;
  std::string msg;
  EXPECT_EQ(v->launch(test_device(), &args, nullptr, nullptr, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_EQ(msg, "test plugin: launch refused on 132 SMs");
  EXPECT_EQ(v->can_implement(test_device(), &args, &msg), PC_STATUS_OK);  // none declared
}

#ifdef EXAMPLE_PLUGIN
TEST(PluginLoading, TheExamplePluginIsAVersionTwoPlugin) {
  VariantRegistry r;
  r.load_plugin(EXAMPLE_PLUGIN);
  const auto* v = r.find(PC_FAMILY_GATHER_CACHED_KV, "example_plugin_gather");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->abi_version, 2);
  for (pc_cache_kind kind : {PC_CACHE_X_SPLIT, PC_CACHE_NHD, PC_CACHE_HND}) {
    EXPECT_TRUE(v->supports_cache_kind(kind)) << kind;
  }
  EXPECT_TRUE(v->supports(PC_DTYPE_FP8_E4M3, 128, 16));
  EXPECT_TRUE(v->has_caps(PC_CAP_COMBINED_KV | PC_CAP_CACHE_PAD | PC_CAP_LARGE_CACHE));
  EXPECT_FALSE(v->has_caps(PC_CAP_DEQUANTIZE));
  // can_implement runs on the host: a dequantizing gather and a dtype mismatch are refused.
  pc_gather_args g{};
  g.struct_size = sizeof g;
  g.dtype = PC_DTYPE_FLOAT16;
  g.num_tokens = 4;
  g.cache.struct_size = sizeof g.cache;
  g.cache.kind = PC_CACHE_NHD;
  g.cache.dtype = PC_DTYPE_FLOAT16;
  g.cache.num_kv_heads = 2;
  g.cache.head_size = 128;
  g.cache.block_size = 16;
  g.cache.key = {16 * 2 * 128, 128, 2 * 128, 0, 1, 128};
  g.cache.value = g.cache.key;
  std::string msg;
  EXPECT_EQ(v->can_implement(test_device(), &g, &msg), PC_STATUS_OK) << msg;
  g.dequantize = 1;
  EXPECT_EQ(v->can_implement(test_device(), &g, &msg), PC_STATUS_UNSUPPORTED);
  EXPECT_NE(msg.find("dequantize"), std::string::npos) << msg;
  g.dequantize = 0;
  g.cache.dtype = PC_DTYPE_FP8_E4M3;
  EXPECT_EQ(v->can_implement(test_device(), &g, &msg), PC_STATUS_INVALID_ARGUMENT);
}
#endif

TEST(PluginLoading, ErrorsNameThePluginAndTheProblem) {
  struct Case {
    const char* path;
    const char* expected;
  };
  const Case cases[] = {
      {TEST_PLUGIN_BAD_ABI,
       "built for plugin ABI version 999, this pagecheck loads versions 1 to 2"},
      {TEST_PLUGIN_SMALL_STRUCT, "struct_size"},
      {TEST_PLUGIN_NO_REGISTER, "missing symbol pagecheck_plugin_register"},
      {TEST_PLUGIN_DECLARES_NOTHING, "declares no supported dtype"},
      {TEST_PLUGIN_REGISTERS_NONE, "registered no variant"},
      {TEST_PLUGIN_FAILS, "registration function returned 7"},
      {"/nonexistent/libnothing.so", "cannot load"},
  };
  for (const Case& c : cases) {
    VariantRegistry r;
    const std::string err = error_of([&] { r.load_plugin(c.path); });
    EXPECT_NE(err.find(c.expected), std::string::npos) << c.path << ": " << err;
    EXPECT_NE(err.find(c.path), std::string::npos) << err;
    EXPECT_TRUE(r.variants().empty()) << c.path;
  }
}

}  // namespace
