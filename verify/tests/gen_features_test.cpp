/// Generators under the vocabulary's features (issues 12 and 13): a default run (200 cases,
/// seed 1) over caps that declare a feature reaches each of its edges, counted as tags; caps
/// without a feature never draw it; split-K edges sit at the partition sizes a variant
/// declares; fp8 caches hold finite codes with per-head scales orders of magnitude apart; old
/// spec JSON still reads; the new fields are validated by name.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/check/verifier.h"
#include "pagecheck/verify/gen/classify.h"
#include "pagecheck/verify/gen/materialize.h"
#include "test_util.h"

namespace pagecheck::verify {
namespace {

using test::default_run;

/// The tag histogram of `specs`, each spec first required to validate.
std::map<std::string, int> histogram(const std::vector<gen::CaseSpec>& specs,
                                     const gen::VariantCaps& caps) {
  for (const auto& s : specs) EXPECT_NO_THROW(gen::validate(s)) << gen::describe(s);
  return test::tag_histogram(specs, caps);
}

std::string text(const std::map<std::string, int>& tags) {
  std::string all;
  for (const auto& [tag, n] : tags) all += " " + tag + "=" + std::to_string(n);
  return all;
}

void expect_tags(const gen::VariantCaps& caps, const std::map<std::string, int>& least) {
  const std::map<std::string, int> tags = histogram(default_run(caps), caps);
  const std::vector<std::string> possible = gen::all_edge_tags(caps);
  for (const auto& [tag, n] : least) {
    EXPECT_NE(std::find(possible.begin(), possible.end(), tag), possible.end())
        << tag << " is not listed as reachable";
    const auto it = tags.find(tag);
    EXPECT_GE(it == tags.end() ? 0 : it->second, n)
        << family_name(caps.family) << ": " << tag << " too rare;" << text(tags);
  }
}

TEST(VerifyGenFeatures, DefaultRunReachesEveryNewAttentionEdge) {
  expect_tags(test::full_caps(PC_FAMILY_PAGED_ATTENTION), {{"cache=nhd", 20},
                                                           {"cache=hnd", 20},
                                                           {"kv=fp8_e4m3", 15},
                                                           {"kv=fp8_e5m2", 15},
                                                           {"scale=per_tensor", 15},
                                                           {"scale=per_kv_head", 15},
                                                           {"scale<1", 15},
                                                           {"scale>1", 5},
                                                           {"scales_apart>=100", 5},
                                                           {"pad_shared", 5},
                                                           {"pad_independent", 5},
                                                           {"combined_kv", 20},
                                                           {"token_stride", 10},
                                                           {"head_stride", 5},
                                                           {"strided_out", 10},
                                                           {"q_len>1", 40},
                                                           {"q_len>rest", 10},
                                                           {"q_len=ctx", 5},
                                                           {"non_causal", 5},
                                                           {"sinks", 20},
                                                           {"sinks_far_above", 3},
                                                           {"sinks_far_below", 3},
                                                           {"sinks@one_partition", 5},
                                                           {"sinks@multi_partition", 5},
                                                           {"window", 20},
                                                           {"window=1", 2},
                                                           {"window=ctx", 2},
                                                           {"window>ctx", 2},
                                                           {"window_block_edge", 3},
                                                           {"soft_cap", 20},
                                                           {"soft_cap<spread", 3},
                                                           {"ctx=0", 15},
                                                           {"split_edge@256", 3},
                                                           {"split_edge@512", 3},
                                                           {"split_edge@1024", 2}});
}

TEST(VerifyGenFeatures, DefaultRunReachesEveryNewCopyEdge) {
  for (pc_family family : {PC_FAMILY_GATHER_CACHED_KV, PC_FAMILY_RESHAPE_AND_CACHE}) {
    std::map<std::string, int> least{{"cache=nhd", 20},         {"cache=hnd", 20},
                                     {"kv=fp8_e4m3", 15},       {"kv=fp8_e5m2", 15},
                                     {"scale=per_kv_head", 15}, {"scales_apart>=100", 5},
                                     {"pad_shared", 5},         {"pad_independent", 5},
                                     {"combined_kv", 20},       {"strided_tokens", 20}};
    if (family == PC_FAMILY_GATHER_CACHED_KV) least["dequantize"] = 30;
    expect_tags(test::full_caps(family), least);
  }
}

/// One feature and the test that a spec does not use it.
struct Feature {
  const char* name;
  std::function<void(gen::VariantCaps&)> remove;
  std::function<bool(const gen::AttentionSpec&)> used;
};

TEST(VerifyGenFeatures, CapsWithoutAFeatureNeverDrawIt) {
  const auto flag = [](uint64_t f) { return [f](gen::VariantCaps& c) { c.caps &= ~f; }; };
  const std::vector<Feature> features{
      {"sinks", flag(PC_CAP_SINKS), [](const auto& s) { return !s.sinks.empty(); }},
      {"window", flag(PC_CAP_WINDOW), [](const auto& s) { return s.window > 0; }},
      {"soft_cap", flag(PC_CAP_SOFT_CAP), [](const auto& s) { return s.soft_cap > 0; }},
      {"non_causal", flag(PC_CAP_NON_CAUSAL), [](const auto& s) { return !s.causal; }},
      {"alibi", flag(PC_CAP_ALIBI), [](const auto& s) { return s.alibi; }},
      {"combined", flag(PC_CAP_COMBINED_KV), [](const auto& s) { return s.cache.combined; }},
      {"independent padding", flag(PC_CAP_CACHE_PAD),
       [](const auto& s) { return !s.cache.pad.shared(); }},
      {"any padding", flag(PC_CAP_CACHE_PAD | PC_CAP_CACHE_PAD_SHARED),
       [](const auto& s) { return s.cache.pad.any(); }},
      {"head stride", flag(PC_CAP_HEAD_STRIDE), [](const auto& s) { return s.query_pad.head > 0; }},
      {"token stride", flag(PC_CAP_TOKEN_STRIDE),
       [](const auto& s) { return s.query_pad.token > 0; }},
      {"query strides", flag(PC_CAP_HEAD_STRIDE | PC_CAP_TOKEN_STRIDE),
       [](const auto& s) { return s.query_pad.any(); }},
      {"strided output", flag(PC_CAP_STRIDED_OUTPUT),
       [](const auto& s) { return s.out_pad.any(); }},
      {"queries", [](gen::VariantCaps& c) { c.max_query_len = 1; },
       [](const auto& s) { return !s.query_lens.empty(); }},
      {"context 0", [](gen::VariantCaps& c) { c.context0 = PC_CONTEXT0_UNSUPPORTED; },
       [](const auto& s) {
         return std::count(s.context_lens.begin(), s.context_lens.end(), 0) > 0;
       }},
      {"fp8", [](gen::VariantCaps& c) { c.kv_dtypes.clear(); },
       [](const auto& s) { return s.cache.kv_dtype != s.dtype; }},
      {"page layouts", [](gen::VariantCaps& c) { c.cache_kinds = {ref::CacheKind::kXSplit}; },
       [](const auto& s) { return s.cache.kind != ref::CacheKind::kXSplit; }},
      {"declared scales", [](gen::VariantCaps& c) { c.scale_kinds.clear(); },
       [](const auto& s) {
         return s.cache.scale_kind == ref::ScaleKind::kPerKvHead ||
                (!s.cache.k_scale.empty() &&
                 (s.cache.k_scale[0] != 1.0f || s.cache.v_scale[0] != 1.0f));
       }},
  };
  for (const Feature& f : features) {
    gen::VariantCaps caps = test::full_caps(PC_FAMILY_PAGED_ATTENTION);
    f.remove(caps);
    int used = 0;
    for (const auto& spec : default_run(caps)) used += f.used(std::get<gen::AttentionSpec>(spec));
    EXPECT_EQ(used, 0) << f.name << " drawn without being declared";
    // ... and with it declared, it is drawn (the test can fail).
    int with = 0;
    for (const auto& spec : default_run(test::full_caps(PC_FAMILY_PAGED_ATTENTION))) {
      with += f.used(std::get<gen::AttentionSpec>(spec));
    }
    EXPECT_GT(with, 0) << f.name << " never drawn with full caps";
  }
  // Copies: no dequantization without PC_CAP_DEQUANTIZE (and no fp8 cache then, since a plain
  // gather copies codes into tokens of the cache dtype); no strides without their flags.
  gen::VariantCaps gather = test::full_caps(PC_FAMILY_GATHER_CACHED_KV);
  gather.caps &= ~uint64_t{PC_CAP_DEQUANTIZE | PC_CAP_STRIDED_OUTPUT};
  gen::VariantCaps reshape = test::full_caps(PC_FAMILY_RESHAPE_AND_CACHE);
  reshape.caps &= ~uint64_t{PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE};
  for (const gen::VariantCaps& caps : {gather, reshape}) {
    for (const auto& spec : default_run(caps)) {
      const auto& c = std::get<gen::CopySpec>(spec);
      EXPECT_FALSE(c.dequantize) << gen::describe(spec);
      EXPECT_FALSE(c.key_pad.any() || c.value_pad.any()) << gen::describe(spec);
      if (caps.family == PC_FAMILY_GATHER_CACHED_KV) {
        EXPECT_EQ(c.cache.kv_dtype, c.dtype);
      }
    }
  }
}

// Issue 15: a gather whose token dtype is fp8 copies raw codes, so its cache has that same
// dtype (there is no E4M3 <-> E5M2 conversion, and fp8 tokens are never dequantized); before the
// fix, kv_options paired fp8 tokens with the other fp8 cache dtype in about half the cases.
TEST(VerifyGenFeatures, Fp8TokensPairOnlyWithTheirOwnCacheDtype) {
  gen::VariantCaps caps = test::full_caps(PC_FAMILY_GATHER_CACHED_KV);
  caps.dtypes.insert(caps.dtypes.end(), {DType::kFloat8E4M3, DType::kFloat8E5M2});
  std::map<DType, int> fp8_tokens;
  for (const auto& spec : default_run(caps, test::LargeCases::kSkip)) {
    const auto& c = std::get<gen::CopySpec>(spec);
    if (!dtype_info(c.dtype).fp8) continue;
    ++fp8_tokens[c.dtype];
    EXPECT_EQ(c.cache.kv_dtype, c.dtype) << gen::describe(spec);
    EXPECT_FALSE(c.dequantize) << gen::describe(spec);
    // The case materializes and the reference copies its codes.
    ref::CacheCopyProblem p = gen::materialize(c);
    EXPECT_NO_THROW(p.validate()) << gen::describe(spec);
    EXPECT_NO_THROW(ref::gather_cached_kv(p)) << gen::describe(spec);
  }
  // Both fp8 token dtypes are drawn (the checks above ran).
  EXPECT_GE(fp8_tokens[DType::kFloat8E4M3], 5);
  EXPECT_GE(fp8_tokens[DType::kFloat8E5M2], 5);
}

TEST(VerifyGenFeatures, SplitEdgesFollowTheDeclaredPartitionSizes) {
  gen::VariantCaps caps = test::decode_caps(PC_FAMILY_PAGED_ATTENTION);
  caps.partition_sizes = {384};
  std::set<int64_t> contexts;
  int extreme = 0;
  for (const auto& spec : default_run(caps)) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    contexts.insert(s.context_lens.begin(), s.context_lens.end());
    if (s.regime == gen::Regime::kExtreme) {
      EXPECT_EQ(s.extreme_partition, 384);
      ++extreme;
    }
  }
  for (int64_t edge : {383, 384, 385}) EXPECT_TRUE(contexts.count(edge)) << edge << " never drawn";
  EXPECT_GT(extreme, 0);
  const std::map<std::string, int> tags = histogram(default_run(caps), caps);
  EXPECT_GE(tags.count("split_edge@384") ? tags.at("split_edge@384") : 0, 5) << text(tags);
  for (const auto& [tag, n] : tags) {
    EXPECT_TRUE(tag.rfind("split_edge@", 0) != 0 || tag == "split_edge@384") << tag;
  }
  const std::vector<std::string> possible = gen::all_edge_tags(caps);
  EXPECT_EQ(std::count_if(possible.begin(), possible.end(),
                          [](const std::string& t) { return t.rfind("split_edge@", 0) == 0; }),
            1);
  // Two declared sizes: edges at both.
  caps.partition_sizes = {64, 384};
  const std::map<std::string, int> both = histogram(default_run(caps), caps);
  EXPECT_GT(both.count("split_edge@64"), 0u) << text(both);
  EXPECT_GT(both.count("split_edge@384"), 0u) << text(both);
}

TEST(VerifyGenFeatures, Fp8CachesHoldFiniteCodesNearTheSaturationEdge) {
  int fp8 = 0, near_edge = 0;
  for (const auto& spec : default_run(test::full_caps(PC_FAMILY_PAGED_ATTENTION))) {
    const auto& s = std::get<gen::AttentionSpec>(spec);
    const DType kv = s.cache.kv_dtype;
    if (!dtype_info(kv).fp8 || gen::is_large(spec) ||
        s.num_heads * gen::largest_context(s) > 4096) {
      continue;
    }
    ++fp8;
    const ref::PagedAttentionProblem p = gen::materialize(s);
    double largest = 0;
    const std::vector<bool> readable = gen::readable_slots(s);
    for (int64_t b = 0; b < p.cache.num_blocks; ++b) {
      for (int64_t slot = 0; slot < p.block_size(); ++slot) {
        if (!readable[b * p.block_size() + slot]) continue;
        for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
          for (int64_t d = 0; d < p.head_size(); ++d) {
            const double k = load_element(kv, p.key_cache.data(), p.cache.key_at(b, h, slot, d));
            ASSERT_TRUE(std::isfinite(k)) << gen::describe(spec);
            largest = std::max(largest, std::fabs(k));
          }
        }
      }
    }
    near_edge += largest >= 0.5 * dtype_info(kv).max_finite;
  }
  EXPECT_GT(fp8, 20);
  EXPECT_GT(near_edge, fp8 / 2) << "codes rarely reach the upper half of the fp8 range";
}

TEST(VerifyGenFeatures, OldSpecJsonStillReads) {
  gen::AttentionSpec s;
  s.dtype = DType::kBFloat16;
  s.cache.kv_dtype = DType::kBFloat16;
  s.context_lens = {17};
  s.max_blocks_per_seq = 2;
  s.num_blocks = 2;
  s.block_table = {1, 0};
  nlohmann::json j = gen::spec_to_json(s);
  for (const char* field :
       {"cache", "query_lens", "sinks", "window", "soft_cap", "causal", "extreme_partition"}) {
    ASSERT_TRUE(j.contains(field)) << field << " is not written";
    j.erase(field);
  }
  j["cache_pad"] = {{"key_block", 8}, {"key_head", 0}, {"value_block", 0}, {"value_head", 8}};
  const auto old = std::get<gen::AttentionSpec>(gen::spec_from_json(j));
  EXPECT_EQ(old.cache.kv_dtype, DType::kBFloat16);  // the spec's dtype
  EXPECT_EQ(old.cache.kind, ref::CacheKind::kXSplit);
  EXPECT_EQ(old.cache.pad.key, (ref::TensorPadding{8, 0, 0}));
  EXPECT_EQ(old.cache.pad.value, (ref::TensorPadding{0, 8, 0}));
  EXPECT_TRUE(old.query_lens.empty() && old.sinks.empty() && old.causal);
  EXPECT_EQ(old.window, 0);
  gen::validate(old);
  // The new form round-trips, features included.
  gen::AttentionSpec f = old;
  f.cache.kind = ref::CacheKind::kHND;
  f.cache.kv_dtype = DType::kFloat8E4M3;
  f.cache.scale_kind = ref::ScaleKind::kPerTensor;
  f.cache.k_scale = {0.03125f};
  f.cache.v_scale = {3.0f};
  f.cache.pad = {};
  f.query_lens = {4};
  f.sinks = {2.5f};
  f.window = 3;
  f.soft_cap = 7.5f;
  f.causal = false;
  gen::validate(f);
  EXPECT_EQ(gen::spec_to_json(gen::spec_from_json(gen::spec_to_json(f))), gen::spec_to_json(f));
  gen::CopySpec c;
  c.slot_mapping = {1};
  nlohmann::json cj = gen::spec_to_json(c);
  cj.erase("cache");
  cj.erase("dequantize");
  cj["cache_pad"] = {{"key_block", 0}, {"key_head", 0}, {"value_block", 0}, {"value_head", 0}};
  EXPECT_EQ(gen::spec_to_json(gen::spec_from_json(cj)), gen::spec_to_json(c));
}

/// The message validate() gives `s`, or "" when it accepts it.
std::string rejection(const gen::CaseSpec& s) {
  try {
    gen::validate(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(VerifyGenFeatures, NewFieldsAreValidatedByName) {
  gen::AttentionSpec s;
  s.num_heads = 2;
  s.context_lens = {5};
  s.block_table = {0};
  ASSERT_EQ(rejection(s), "");
  const auto with = [&](auto edit) {
    gen::AttentionSpec c = s;
    edit(c);
    return rejection(c);
  };
  EXPECT_NE(with([](auto& c) { c.dtype = DType::kFloat32; }).find("cache.kv_dtype"),
            std::string::npos);
  EXPECT_NE(with([](auto& c) { c.cache.kv_dtype = DType::kFloat8E5M2; }).find("scale_kind"),
            std::string::npos);
  EXPECT_NE(with([](auto& c) {
              c.cache.kv_dtype = DType::kFloat8E5M2;
              c.cache.scale_kind = ref::ScaleKind::kPerKvHead;
              c.cache.k_scale = c.cache.v_scale = {1.0f, 2.0f};
            }).find("cache.k_scale has 2 entries"),
            std::string::npos);
  EXPECT_NE(with([](auto& c) { c.query_lens = {6}; }).find("query_lens[0] = 6"), std::string::npos);
  EXPECT_NE(with([](auto& c) {
              c.query_lens = {1, 1};
            }).find("query_lens has 2"),
            std::string::npos);
  EXPECT_NE(with([](auto& c) { c.window = -1; }).find("window"), std::string::npos);
  EXPECT_NE(with([](auto& c) { c.soft_cap = -1; }).find("soft_cap"), std::string::npos);
  EXPECT_NE(with([](auto& c) { c.sinks = {1.0f}; }).find("sinks has 1"), std::string::npos);
  EXPECT_NE(with([](auto& c) {
              c.cache.combined = true;
              c.cache.pad.key.block = 8;
            }).find("combined"),
            std::string::npos);
  // A context-0 row may carry any number of query rows.
  EXPECT_EQ(with([](auto& c) {
              c.num_seqs = 2;
              c.context_lens = {5, 0};
              c.block_table = {0, -1};
              c.query_lens = {2, 3};
            }),
            "");
  gen::CopySpec g;
  g.slot_mapping = {0};
  g.cache.kv_dtype = DType::kFloat8E4M3;
  g.cache.scale_kind = ref::ScaleKind::kPerTensor;
  g.cache.k_scale = g.cache.v_scale = {0.5f};
  EXPECT_NE(rejection(g).find("a raw gather copies codes"), std::string::npos) << rejection(g);
  g.dequantize = true;
  EXPECT_EQ(rejection(g), "");
  g.family = PC_FAMILY_RESHAPE_AND_CACHE;
  EXPECT_NE(rejection(g).find("dequantize"), std::string::npos);
}

TEST(VerifyGenFeatures, CapsOfReadsTheV2DeclarationAndRoundTripsThroughJson) {
  VariantInfo info;
  info.name = "engine";
  pc_variant& v = info.variant;
  v.family = PC_FAMILY_PAGED_ATTENTION;
  v.dtype_mask = (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
  v.kv_dtype_mask = v.dtype_mask | (1u << PC_DTYPE_FP8_E4M3);
  v.cache_kind_mask = (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
  v.scale_kind_mask = 1u << PC_SCALE_PER_KV_HEAD;
  v.caps = PC_CAP_SINKS | PC_CAP_CACHE_PAD_SHARED;
  v.max_query_len = 8;
  v.context0 = PC_CONTEXT0_ZEROS;
  v.nondeterministic = 1;
  v.precision.rounded = PC_ROUND_WEIGHTS;
  info.head_sizes = {128};
  info.block_sizes = {16};
  info.partition_sizes = {384, 768};
  const gen::VariantCaps c = gen::caps_of(info);
  EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::kFloat16, DType::kBFloat16}));
  EXPECT_EQ(c.kv_dtypes,
            (std::vector<DType>{DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3}));
  EXPECT_EQ(c.kv_dtypes_for(DType::kFloat16),
            (std::vector<DType>{DType::kFloat16, DType::kFloat8E4M3}));
  EXPECT_EQ(c.cache_kinds,
            (std::vector<ref::CacheKind>{ref::CacheKind::kNHD, ref::CacheKind::kHND}));
  EXPECT_EQ(c.scale_kinds, (std::vector<ref::ScaleKind>{ref::ScaleKind::kPerKvHead}));
  EXPECT_EQ(c.max_query_len, 8);
  EXPECT_EQ(c.partition_sizes, (std::vector<int64_t>{384, 768}));
  EXPECT_EQ(c.edge_partitions(), c.partition_sizes);
  EXPECT_EQ(c.context0, PC_CONTEXT0_ZEROS);
  EXPECT_TRUE(c.nondeterministic);
  EXPECT_EQ(c.precision.rounded, static_cast<uint32_t>(PC_ROUND_WEIGHTS));
  EXPECT_EQ(gen::cap_names(c.caps), (std::vector<std::string>{"cache_pad_shared", "sinks"}));
  const nlohmann::json j = c;
  const gen::VariantCaps back = j.get<gen::VariantCaps>();
  EXPECT_EQ(nlohmann::json(back), j);
  // What a declaration without the v2 fields means: x-split, decode, default partitions.
  v.kv_dtype_mask = v.cache_kind_mask = v.scale_kind_mask = 0;
  v.max_query_len = 0;
  info.partition_sizes.clear();
  const gen::VariantCaps plain = gen::caps_of(info);
  EXPECT_TRUE(plain.kv_dtypes.empty());
  EXPECT_EQ(plain.kv_dtypes_for(DType::kBFloat16), std::vector<DType>{DType::kBFloat16});
  EXPECT_EQ(plain.cache_kinds, std::vector<ref::CacheKind>{ref::CacheKind::kXSplit});
  EXPECT_EQ(plain.max_query_len, 1);
  EXPECT_EQ(plain.edge_partitions(), gen::default_partition_sizes());
}

}  // namespace
}  // namespace pagecheck::verify
