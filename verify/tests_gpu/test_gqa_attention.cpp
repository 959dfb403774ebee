/// v3_gqa against the float64 reference on fixed problems that exercise what only it declares:
/// NHD / HND / combined caches, fp8 e4m3 / e5m2 KV with per-tensor and per-kv-head scales, up
/// to 16 new tokens per sequence (causal and not), sinks, sliding windows (the tokens before
/// every window poisoned with NaN, so a read outside it shows), soft-caps, context-0 rows,
/// block sizes 1 and 256, row chunks (group x q_len > 8) and split-K merges. Outputs start as
/// NaN poison (the device runner's); the bound is attention_tolerance() under the declared
/// precision. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "case_builder.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::gpu_test {
namespace {

/// A case and whether the keys and values before every row's window are poisoned.
struct GqaCase {
  std::string name;
  gen::AttentionSpec spec;
  bool poison_before_window = false;
};

std::ostream& operator<<(std::ostream& os, const GqaCase& c) {
  return os << c.name;
}

gen::AttentionSpec base(const std::string& name, DType dtype, int64_t head, int64_t block,
                        int64_t heads, int64_t kv_heads, std::vector<int32_t> lens, uint64_t seed) {
  const AttentionCase c =
      Attention(name, dtype, head, block, heads, kv_heads, std::move(lens), seed);
  return c.spec;
}

void fp8(gen::AttentionSpec& s, DType kv, ref::ScaleKind kind) {
  s.cache.kv_dtype = kv;
  s.cache.scale_kind = kind;
  const int64_t n = kind == ref::ScaleKind::kPerKvHead ? s.num_kv_heads : 1;
  s.cache.k_scale.clear();
  s.cache.v_scale.clear();
  for (int64_t i = 0; i < n; ++i) {
    s.cache.k_scale.push_back(0.02f * static_cast<float>(1 << (i % 4)));
    s.cache.v_scale.push_back(0.5f / static_cast<float>(1 << (i % 3)));
  }
}

void sinks(gen::AttentionSpec& s) {
  s.sinks.clear();
  for (int64_t h = 0; h < s.num_heads; ++h) s.sinks.push_back(static_cast<float>(h % 5) - 2.f);
}

std::vector<GqaCase> gqa_cases() {
  std::vector<GqaCase> out;
  const DType f16 = DType::kFloat16, bf16 = DType::kBFloat16, f32 = DType::kFloat32;
  {  // plain decode, group 8, x-split (split-K: a long context among short ones)
    gen::AttentionSpec s = base("decode_g8_xsplit", f16, 128, 16, 64, 8, {1, 17, 300, 2049}, 11);
    out.push_back({"decode_g8_xsplit", s});
  }
  {  // NHD, fp8 e4m3 per kv head, bf16 queries, ALiBi
    gen::AttentionSpec s = base("", bf16, 128, 16, 32, 4, {5, 64, 65, 700}, 12);
    s.cache.kind = ref::CacheKind::kNHD;
    fp8(s, DType::kFloat8E4M3, ref::ScaleKind::kPerKvHead);
    s.alibi = true;
    out.push_back({"nhd_e4m3_per_head_alibi", s});
  }
  {  // HND, fp8 e5m2 per tensor, f16, combined K/V
    gen::AttentionSpec s = base("", f16, 64, 32, 8, 2, {33, 31, 129}, 13);
    s.cache.kind = ref::CacheKind::kHND;
    s.cache.combined = true;
    fp8(s, DType::kFloat8E5M2, ref::ScaleKind::kPerTensor);
    out.push_back({"hnd_e5m2_combined", s});
  }
  {  // multi-token, causal, sinks, soft-cap, float32, x-split values read along the slots
    gen::AttentionSpec s = base("", f32, 96, 8, 12, 3, {16, 40, 7}, 14);
    s.query_lens = {16, 5, 7};
    sinks(s);
    s.soft_cap = 5.f;
    out.push_back({"qlen16_sinks_softcap_f32", s});
  }
  {  // non-causal multi-token, MHA, block size 1
    gen::AttentionSpec s = base("", f16, 80, 1, 4, 4, {9, 3, 20}, 15);
    s.query_lens = {4, 3, 1};
    s.causal = false;
    out.push_back({"noncausal_mha_block1", s});
  }
  {  // window with sinks, block 256, NHD; the tokens before every window are NaN
    gen::AttentionSpec s = base("", bf16, 256, 256, 16, 2, {700, 300, 257}, 16);
    s.cache.kind = ref::CacheKind::kNHD;
    s.window = 128;
    s.query_lens = {3, 1, 2};
    sinks(s);
    out.push_back({"window128_sinks_block256", s, true});
  }
  {  // window of 1 and a window ending on a block edge, split-K over a long context
    gen::AttentionSpec s = base("", f16, 128, 16, 16, 4, {4097, 64, 5000}, 17);
    s.window = 1;
    out.push_back({"window1_long", s, true});
    s.window = 160;
    s.query_lens = {2, 1, 16};
    out.push_back({"window160_qlen", s, true});
  }
  {  // context-0 padding rows between live ones, padded cache and strided query / output
    AttentionCase c = Attention("", f16, 112, 16, 8, 1, {0, 23, 0, 50}, 18)
                          .padded_cache()
                          .strided_query()
                          .strided_out()
                          .peaked();
    c.spec.query_lens = {2, 3, 1, 4};
    out.push_back({"context0_mqa_padded_strided", c.spec});
  }
  {  // fp8 e4m3 x-split with float32 queries, group 16 x q_len 4 = 64 rows (8 row chunks)
    gen::AttentionSpec s = base("", f32, 192, 32, 32, 2, {130, 1025}, 19);
    fp8(s, DType::kFloat8E4M3, ref::ScaleKind::kPerKvHead);
    s.query_lens = {4, 4};
    out.push_back({"xsplit_e4m3_f32_rowchunks", s});
  }
  return out;
}

/// Sets to NaN (all-ones bytes: NaN in every KV dtype) the K and V elements of the tokens of
/// every sequence before the first position any of its rows attends.
void poison_before_windows(ref::PagedAttentionProblem& p) {
  if (p.features.window <= 0) return;
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t eb = static_cast<int64_t>(dtype_size(c.dtype));
  std::vector<std::byte>& vbuf = c.combined ? p.key_cache : p.value_cache;
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    const int64_t n = p.batch.context_lens[s];
    const int64_t first = std::max<int64_t>(0, n - p.batch.query_len(s) - p.features.window + 1);
    for (int64_t t = 0; t < first; ++t) {
      const int64_t block = p.batch.block_table[s * p.batch.max_blocks_per_seq + t / c.block_size];
      const int64_t slot = t % c.block_size;
      for (int64_t h = 0; h < c.num_kv_heads; ++h) {
        for (int64_t d = 0; d < c.head_size; ++d) {
          std::memset(p.key_cache.data() + c.key_at(block, h, slot, d) * eb, 0xff, eb);
          std::memset(vbuf.data() + c.value_at(block, h, slot, d) * eb, 0xff, eb);
        }
      }
    }
  }
}

const VariantInfo* gqa_variant() {
  for (const VariantInfo* v : builtin_registry().family(PC_FAMILY_PAGED_ATTENTION)) {
    if (v->name == "v3_gqa") return v;
  }
  return nullptr;
}

class GqaFixed : public ::testing::TestWithParam<GqaCase> {};

TEST_P(GqaFixed, MatchesReference) {
  const VariantInfo* v = gqa_variant();
  if (v == nullptr && !builtin_kernels_available()) GTEST_SKIP() << "no CUDA kernels in this build";
  ASSERT_NE(v, nullptr) << "v3_gqa is not registered";
  // The problem, its reference and its bound are built (and so checked) before the device skip.
  const GqaCase& c = GetParam();
  ref::PagedAttentionProblem p = gen::materialize(c.spec);
  if (c.poison_before_window) poison_before_windows(p);
  const ref::PagedAttentionResult expected = ref::paged_attention(p);
  const std::vector<double> tolerance =
      verify::attention_tolerance(p, expected, tolerance_model(*v));
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  verify::DeviceRunOptions options;
  options.attention_out_layout = device_out_layout(c.spec);
  const verify::AttentionRun run = verify::run_paged_attention(*v, p, options);
  ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
      << disposition_name(run.outcome.disposition) << ": " << run.outcome.message;
  EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
  const verify::AttentionComparison m = verify::compare_attention(p, expected, tolerance, run.out);
  EXPECT_TRUE(m.passed()) << m.describe();
}

INSTANTIATE_TEST_SUITE_P(Gqa, GqaFixed, ::testing::ValuesIn(gqa_cases()),
                         [](const ::testing::TestParamInfo<GqaCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace pagecheck::gpu_test
