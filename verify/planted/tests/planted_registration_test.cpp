/// CPU tests of the planted variants' one registration path and one attention params (no GPU:
/// registering and filling params make no CUDA call). Every planted variant declares what its
/// table says (planted_features.h for the generic ones, the built-ins' declaration for the
/// others), and the params attention_params() fills from the converter's arguments run the
/// generic row to the reference's output on every layout, with fp8 scales and every feature.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../src/planted_kernels.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/planted.h"
#include "pagecheck/verify/planted_features.h"
#include "pagecheck/verify/selfcheck_problems.h"

namespace pagecheck::verify {
namespace {

std::vector<int32_t> sizes(const int32_t* data, std::size_t n) {
  return {data, data + n};
}

template <std::size_t N>
std::vector<int32_t> sizes(const int32_t (&data)[N]) {
  return sizes(data, N);
}

constexpr uint64_t kLayoutCaps = PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT |
                                 PC_CAP_CACHE_PAD_SHARED | PC_CAP_CACHE_PAD;
constexpr uint32_t kTokenDtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);

/// What every planted variant declares whatever its table.
void expect_common(const VariantInfo& info, const PlantedVariant& p) {
  EXPECT_EQ(info.origin, "planted");
  EXPECT_EQ(info.description, p.description);
  EXPECT_EQ(info.variant.dtype_mask, kTokenDtypes);
  EXPECT_EQ(info.variant.caps & kLayoutCaps, kLayoutCaps);
  EXPECT_EQ(info.variant.precision.qk_accum, PC_ACCUM_FLOAT32);
  EXPECT_EQ(info.variant.precision.pv_accum, PC_ACCUM_FLOAT32);
  EXPECT_EQ(info.variant.precision.rounded, 0u);
  EXPECT_EQ(info.variant.nondeterministic, 0);
  EXPECT_NE(info.variant.can_implement, nullptr);
  EXPECT_NE(info.variant.launch, nullptr);
  EXPECT_EQ(info.variant.workspace_bytes != nullptr, p.family == PC_FAMILY_PAGED_ATTENTION);
}

/// The generic variants: their row of kFeatureDecls, field for field.
void expect_feature_decl(const VariantInfo& info, const planted::FeatureDecl& d) {
  EXPECT_EQ(info.variant.family, d.family);
  EXPECT_EQ(info.variant.kv_dtype_mask, d.kv_dtype_mask);
  EXPECT_EQ(info.variant.cache_kind_mask, d.cache_kind_mask);
  EXPECT_EQ(info.variant.scale_kind_mask, d.scale_kind_mask);
  EXPECT_EQ(info.variant.caps, kLayoutCaps | d.caps);
  EXPECT_EQ(info.variant.max_query_len, d.max_query_len);
  EXPECT_EQ(info.variant.context0, d.context0);
  EXPECT_EQ(info.head_sizes,
            d.wide_sizes ? sizes(planted::kControlHeadSizes) : sizes(planted::kBugHeadSizes));
  EXPECT_EQ(info.block_sizes,
            d.wide_sizes ? sizes(planted::kControlBlockSizes) : sizes(planted::kBugBlockSizes));
  EXPECT_TRUE(info.partition_sizes.empty());
}

/// The other variants: the built-in kernels' declaration (x-split, no scales, decode, ALiBi for
/// attention), split-K partitions of 256 for the split kernels, large caches for two.
void expect_builtin_like(const VariantInfo& info, const PlantedVariant& p) {
  static const std::set<std::string> split = {"planted_control_v2", "planted_partition_max_only",
                                              "planted_partitions_from_bound"};
  static const std::set<std::string> large = {"planted_control_v1", "planted_offset_32bit"};
  EXPECT_EQ(info.variant.family, p.family);
  EXPECT_EQ(info.variant.kv_dtype_mask, 0u);
  EXPECT_EQ(info.variant.cache_kind_mask, 1u << PC_CACHE_X_SPLIT);
  EXPECT_EQ(info.variant.scale_kind_mask, 1u << PC_SCALE_NONE);
  uint64_t caps = kLayoutCaps;
  if (p.family == PC_FAMILY_PAGED_ATTENTION) caps |= PC_CAP_ALIBI;
  if (large.count(p.name) != 0) caps |= PC_CAP_LARGE_CACHE;
  EXPECT_EQ(info.variant.caps, caps);
  EXPECT_EQ(info.variant.max_query_len, 1);
  EXPECT_EQ(info.variant.context0, PC_CONTEXT0_UNSUPPORTED);
  EXPECT_EQ(info.head_sizes, (std::vector<int32_t>{64, 80, 96, 112, 128, 192, 256}));
  EXPECT_EQ(info.block_sizes, (std::vector<int32_t>{8, 16, 32}));
  EXPECT_EQ(info.partition_sizes,
            split.count(p.name) != 0
                ? std::vector<int32_t>{static_cast<int32_t>(planted::kPlantedPartition)}
                : std::vector<int32_t>{});
}

TEST(PlantedRegistration, EveryVariantDeclaresWhatItsTableSays) {
  if (!planted_variants_available()) GTEST_SKIP() << "no planted kernels in this build";
  VariantRegistry registry;
  register_planted_variants(registry);
  ASSERT_EQ(registry.variants().size(), planted_catalogue().size());
  std::size_t generic = 0;
  for (const PlantedVariant& p : planted_catalogue()) {
    SCOPED_TRACE(p.name);
    const VariantInfo* info = registry.find(p.family, p.name);
    ASSERT_NE(info, nullptr);
    expect_common(*info, p);
    if (const planted::FeatureDecl* d = planted::find_feature_decl(p.name.c_str())) {
      ++generic;
      expect_feature_decl(*info, *d);
      EXPECT_EQ(info->variant.user_data, static_cast<const void*>(d));
    } else {
      expect_builtin_like(*info, p);
    }
  }
  EXPECT_EQ(generic, std::size(planted::kFeatureDecls));
}

/// The generic row (planted_row.h) on the host over the params of `spec`'s problem, against the
/// reference: attention_params() must carry every field the row reads. Also the fields only the
/// one-pass and split-K kernels read.
void check_params_run_the_row(const AttentionSpec& spec) {
  SCOPED_TRACE(spec.describe());
  const ref::PagedAttentionProblem p = make_attention_problem(spec);
  const ref::PagedAttentionResult expected = ref::paged_attention(p, {1});
  std::vector<float> out(p.query.size() / sizeof(float));
  const ref::RaggedBatch& b = p.batch;
  const auto data = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
  const pc_paged_attention_args args =
      attention_args(p, p.query_layout,
                     {p.query.data(), p.key_cache.data(), p.value_cache.data(), data(b.query_start),
                      b.context_lens.data(), b.block_table.data(), data(p.features.alibi_slopes),
                      data(p.features.sinks), data(p.k_scale), data(p.v_scale), out.data()});
  const planted::AttentionParams params = planted::attention_params(args);
  EXPECT_EQ(params.num_rows, b.num_query_tokens());
  EXPECT_EQ(params.max_blocks_per_seq, b.max_blocks_per_seq);
  EXPECT_EQ(params.max_context_len, args.batch.max_context_len);
  EXPECT_EQ(params.out, out.data());
  EXPECT_EQ(params.out_stride_token, args.out_stride_token);
  EXPECT_EQ(params.out_stride_head, args.out_stride_head);
  std::vector<float> logits(params.max_context_len), row(p.head_size());
  for (int64_t r = 0; r < params.num_rows; ++r) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      planted::attend_row(params.row, planted::RowBug::kNone, r, h, logits.data(), row.data());
      for (int64_t d = 0; d < p.head_size(); ++d) {
        const double want = expected.out[(r * p.num_heads + h) * p.head_size() + d];
        ASSERT_NEAR(row[d], want, 1e-4 * (1 + std::fabs(want))) << "row " << r << " head " << h;
      }
    }
  }
}

TEST(PlantedRegistration, AttentionParamsRunTheRowAsTheReference) {
  if (!planted_variants_available()) GTEST_SKIP() << "no planted kernels in this build";
  AttentionSpec s;
  s.dtype = DType::kFloat32;
  s.num_heads = 6;
  s.num_kv_heads = 2;
  s.head_size = 32;
  s.block_size = 8;
  s.context_lens = {37, 9, 0, 20};
  s.query_lens = {3, 1, 1, 4};
  s.alibi = s.sinks = true;
  s.window = 12;
  s.soft_cap = 30;
  s.query_pad = s.cache_pad = 1;
  s.seed = std::random_device{}();
  for (const ref::CacheKind kind :
       {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND}) {
    s.kind = kind;
    s.cache_dtype.reset();
    s.scale_kind = ref::ScaleKind::kNone;
    s.combined = kind == ref::CacheKind::kNHD;
    check_params_run_the_row(s);
    s.cache_dtype = DType::kFloat8E4M3;  // per-kv-head scales: k_scale, v_scale and the kv head
    s.scale_kind = ref::ScaleKind::kPerKvHead;
    check_params_run_the_row(s);
  }
}

}  // namespace
}  // namespace pagecheck::verify
