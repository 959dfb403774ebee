// Registry: variant validation and plugin loading errors (CPU only).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "pagecheck/registry.h"

namespace {

using pagecheck::RegistryError;
using pagecheck::VariantRegistry;

const int32_t kHeads[] = {64, 128};
const int32_t kBlocks[] = {16};

pc_status noop_launch(const pc_variant*, const void*, void*, void*, char*, size_t) {
  return PC_STATUS_OK;
}

pc_variant make_variant(const char* name) {
  pc_variant v{};
  v.name = name;
  v.description = "d";
  v.family = PC_FAMILY_PAGED_ATTENTION;
  v.dtype_mask = 1u << PC_DTYPE_FLOAT16;
  v.head_sizes = kHeads;
  v.num_head_sizes = 2;
  v.block_sizes = kBlocks;
  v.num_block_sizes = 1;
  v.launch = &noop_launch;
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const RegistryError& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, AddsCopiesAndFinds) {
  VariantRegistry r;
  std::string name = "v_a";
  pc_variant v = make_variant(name.c_str());
  r.add(v, "builtin");
  name = "zzz";  // the registry must own its copy
  const auto* found = r.find(PC_FAMILY_PAGED_ATTENTION, "v_a");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->origin, "builtin");
  EXPECT_TRUE(found->supports(PC_DTYPE_FLOAT16, 128, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT32, 128, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT16, 80, 16));
  EXPECT_FALSE(found->supports(PC_DTYPE_FLOAT16, 128, 8));
  EXPECT_EQ(r.find(PC_FAMILY_GATHER_CACHED_KV, "v_a"), nullptr);
  EXPECT_EQ(r.family(PC_FAMILY_PAGED_ATTENTION).size(), 1u);
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
  EXPECT_EQ(r.variants().size(), 1u);
}

TEST(Registry, FamilyNamesRoundTrip) {
  for (pc_family f : {PC_FAMILY_PAGED_ATTENTION, PC_FAMILY_GATHER_CACHED_KV,
                      PC_FAMILY_RESHAPE_AND_CACHE}) {
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
  char msg[128] = {};
  EXPECT_EQ(v->variant.launch(&v->variant, nullptr, nullptr, nullptr, msg, sizeof msg),
            PC_STATUS_UNSUPPORTED);
  EXPECT_STREQ(msg, "test plugin: launch refused");
}

TEST(PluginLoading, ErrorsNameThePluginAndTheProblem) {
  struct Case {
    const char* path;
    const char* expected;
  };
  const Case cases[] = {
      {TEST_PLUGIN_BAD_ABI, "built for plugin ABI version 999"},
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
