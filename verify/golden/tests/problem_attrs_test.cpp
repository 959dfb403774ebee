/// The HDF5 form of the problem vocabulary: each concept's one writer and one reader round-trip
/// through a real file for every cache kind and dtype (fp8 with both scale kinds, combined
/// K/V), a multi-token batch with empty rows, every attention feature, and whole problems; the
/// readers name what is missing or wrong. Shapes, paddings and values are drawn fresh per run
/// (the seed is printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "golden_test_util.h"
#include "pagecheck/verify/gen/materialize.h"
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

using testing::TempDir;

/// `file` written to disk and read back.
GoldenFile through_disk(const GoldenFile& file) {
  TempDir dir;
  write_golden_file(file, dir.file("a.h5"));
  return read_golden_file(dir.file("a.h5"));
}

class ProblemAttrs : public ::testing::Test {
 protected:
  void SetUp() override { RecordProperty("seed", std::to_string(seed_)); }
  int64_t draw(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  float positive() { return std::uniform_real_distribution<float>(0.01f, 4.0f)(rng_); }

  const uint64_t seed_ = std::random_device{}();
  std::mt19937_64 rng_{seed_};
};

/// Member `member` of a T, with its name for the failure message.
template <typename T, typename M>
struct Field {
  const char* name;  ///< the member's name
  M T::*member;      ///< the member
};

template <typename T, typename M>
Field<T, M> field(const char* name, M T::*member) {
  return {name, member};
}

/// `T`'s member `m` with its name.
#define PC_FIELD(T, m) field(#m, &T::m)

template <typename T, typename M>
void expect_field(const char* what, const T& a, const T& b, const Field<T, M>& f) {
  EXPECT_EQ(a.*f.member, b.*f.member) << what << "." << f.name;
}

/// EXPECT_EQ on each of `fields` of `a` and `b`, a failure naming `what` and the field.
template <typename T, typename... M>
void expect_fields(const char* what, const T& a, const T& b, const Field<T, M>&... fields) {
  (expect_field(what, a, b, fields), ...);
}

void expect_same(const ref::CacheTensorStrides& a, const ref::CacheTensorStrides& b,
                 const char* what) {
  using S = ref::CacheTensorStrides;
  expect_fields(what, a, b, PC_FIELD(S, block), PC_FIELD(S, head), PC_FIELD(S, slot),
                PC_FIELD(S, group), PC_FIELD(S, dim), PC_FIELD(S, dim_split));
}

void expect_same(const ref::PagedCacheLayout& a, const ref::PagedCacheLayout& b) {
  using L = ref::PagedCacheLayout;
  expect_fields("cache", a, b, PC_FIELD(L, kind), PC_FIELD(L, dtype), PC_FIELD(L, scale_kind),
                PC_FIELD(L, num_kv_heads), PC_FIELD(L, head_size), PC_FIELD(L, block_size),
                PC_FIELD(L, combined), PC_FIELD(L, value_base));
  EXPECT_EQ(a.shape().num_blocks, b.shape().num_blocks);
  expect_same(a.key, b.key, "key");
  expect_same(a.value, b.value, "value");
}

void expect_same(const ref::RaggedBatch& a, const ref::RaggedBatch& b) {
  using B = ref::RaggedBatch;
  expect_fields("batch", a, b, PC_FIELD(B, num_seqs), PC_FIELD(B, query_start),
                PC_FIELD(B, context_lens), PC_FIELD(B, max_blocks_per_seq),
                PC_FIELD(B, block_table), PC_FIELD(B, block_table_stride),
                PC_FIELD(B, block_table_padding), PC_FIELD(B, context_len_bound));
}

void expect_same(const ref::AttentionFeatures& a, const ref::AttentionFeatures& b) {
  using F = ref::AttentionFeatures;
  expect_fields("features", a, b, PC_FIELD(F, alibi_slopes), PC_FIELD(F, sinks),
                PC_FIELD(F, window), PC_FIELD(F, soft_cap), PC_FIELD(F, causal));
}

#undef PC_FIELD

/// Random bytes for a tensor dataset of `spec`.
std::vector<std::byte> random_bytes(const DatasetSpec& spec, std::mt19937_64& rng) {
  int64_t n = 1;
  for (int64_t d : spec.dims) n *= d;
  std::vector<std::byte> bytes(static_cast<std::size_t>(n) * element_size(spec.type));
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
  return bytes;
}

TEST_F(ProblemAttrs, CacheDescriptorRoundTripsForEveryKindDtypeAndScaleKind) {
  for (ref::CacheKind kind :
       {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND}) {
    for (const DTypeInfo& row : all_dtypes()) {
      for (bool combined : {false, true}) {
        SCOPED_TRACE(std::string(ref::cache_kind_name(kind)) + " " + row.name +
                     (combined ? " combined" : "") + ", seed " + std::to_string(seed_));
        const ref::CacheShape shape{draw(1, 9), draw(1, 4), 16 * draw(1, 8), draw(1, 33)};
        ref::TensorPadding key{draw(0, 5), draw(0, 5), draw(0, 5)};
        const ref::TensorPadding value =
            combined ? key : ref::TensorPadding{draw(0, 5), draw(0, 5), draw(0, 5)};
        ref::ScaleKind scales = ref::ScaleKind::kNone;
        if (row.fp8) scales = draw(0, 1) ? ref::ScaleKind::kPerKvHead : ref::ScaleKind::kPerTensor;
        CacheForm written;
        written.layout =
            ref::make_cache_layout(kind, row.dtype, shape, {key, value}, combined, scales);
        for (int64_t i = 0; i < written.layout.scale_count(); ++i) {
          written.k_scale.push_back(positive());
          written.v_scale.push_back(positive());
        }
        GoldenFile file;
        write_cache(written, file);
        const std::vector<DatasetSpec> tensors = cache_tensor_specs("inputs", written.layout);
        ASSERT_EQ(tensors.size(), combined ? 1u : 2u);
        std::vector<std::vector<std::byte>> contents;
        for (const DatasetSpec& t : tensors) {
          contents.push_back(random_bytes(t, rng_));
          add_dataset(file, t, contents.back());
        }
        const GoldenFile read = through_disk(file);
        GoldenReader reader(read, "a.h5");
        const CacheForm back = read_cache(reader);
        expect_same(back.layout, written.layout);
        EXPECT_EQ(back.k_scale, written.k_scale);
        EXPECT_EQ(back.v_scale, written.v_scale);
        for (std::size_t k = 0; k < tensors.size(); ++k) {
          EXPECT_TRUE(reader.bytes(cache_tensor_specs("inputs", back.layout)[k]) == contents[k])
              << tensors[k].path;
        }
        if (combined) {  // one allocation: both tensors, the value view in the attributes
          EXPECT_EQ(tensors[0].dims, std::vector<int64_t>{written.layout.key_span()});
          EXPECT_EQ(read.find("inputs/key_cache")->attrs.at("value_offset"),
                    AttrValue(written.layout.value_base));
        }
        EXPECT_EQ(read.find("inputs/key_cache")->attrs.at("dtype"),
                  AttrValue(std::string(row.name)));
        EXPECT_NO_THROW(reader.refuse_unread("this test"));
      }
    }
  }
}

TEST_F(ProblemAttrs, MultiTokenBatchWithEmptyRowsRoundTrips) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  ref::RaggedBatch b;
  b.num_seqs = draw(1, 7);
  b.max_blocks_per_seq = draw(1, 6);
  b.query_start.push_back(0);
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    const int32_t context = s == 0 ? 0 : static_cast<int32_t>(draw(1, b.max_blocks_per_seq * 4));
    b.context_lens.push_back(context);
    b.query_start.push_back(b.query_start.back() + static_cast<int32_t>(draw(context ? 1 : 0, 3)));
  }
  for (int64_t i = 0; i < b.num_seqs * b.max_blocks_per_seq; ++i) {
    b.block_table.push_back(static_cast<int32_t>(draw(-1, 50)));
  }
  b.block_table_stride = b.max_blocks_per_seq + draw(0, 3);
  b.block_table_padding = static_cast<int32_t>(draw(0, 1 << 30));
  b.context_len_bound = draw(0, 100);
  GoldenFile file;
  write_batch(b, file);
  const GoldenFile read = through_disk(file);
  GoldenReader reader(read, "a.h5");
  expect_same(read_batch(reader), b);
  EXPECT_NO_THROW(reader.refuse_unread("this test"));

  b.query_start.clear();  // decode: no query_start dataset at all
  GoldenFile decode;
  write_batch(b, decode);
  EXPECT_EQ(decode.find("inputs/query_start"), nullptr);
  GoldenReader decode_reader(decode, "b.h5");
  expect_same(read_batch(decode_reader), b);
}

TEST_F(ProblemAttrs, EveryFeatureRoundTrips) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const int64_t heads = draw(1, 9);
  ref::AttentionFeatures f;
  for (int64_t h = 0; h < heads; ++h) {
    f.alibi_slopes.push_back(positive());
    f.sinks.push_back(positive() - 2.0f);
  }
  f.window = draw(1, 500);
  f.soft_cap = positive() * 10;
  f.causal = false;
  for (const ref::AttentionFeatures& features : {f, ref::AttentionFeatures{}}) {
    GoldenFile file;
    write_features(features, heads, file);
    const GoldenFile read = through_disk(file);
    GoldenReader reader(read, "a.h5");
    expect_same(read_features(reader, heads), features);
    EXPECT_NO_THROW(reader.refuse_unread("this test"));
  }
}

/// An fp8 NHD attention case with per-KV-head scales, a multi-token non-causal batch with
/// sinks, a window and a soft-cap, materialized by gen (the one case stack).
gen::AttentionSpec feature_rich_spec(uint64_t seed) {
  gen::AttentionSpec s;
  s.dtype = DType::kBFloat16;
  s.head_size = 64;
  s.block_size = 8;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.num_seqs = 2;
  s.context_lens = {13, 20};
  s.query_lens = {3, 5};
  s.max_blocks_per_seq = 3;
  s.num_blocks = 7;
  s.block_table = {4, 0, -1, 2, 6, 5};
  s.sinks = {0.5f, -1.0f, 0.25f, 2.0f};
  s.window = 9;
  s.soft_cap = 30.0f;
  s.causal = false;
  s.cache.kind = ref::CacheKind::kNHD;
  s.cache.kv_dtype = DType::kFloat8E4M3;
  s.cache.scale_kind = ref::ScaleKind::kPerKvHead;
  s.cache.k_scale = {0.02f, 0.05f};
  s.cache.v_scale = {0.03f, 0.01f};
  s.cache.pad = {{8, 0, 8}, {0, 8, 0}};
  s.content_seed = seed;
  return s;
}

TEST_F(ProblemAttrs, WholeAttentionProblemRoundTrips) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const ref::PagedAttentionProblem p = gen::materialize(feature_rich_spec(seed_));
  GoldenFile file;
  write_attention_problem(p, file);
  const GoldenFile read = through_disk(file);
  GoldenReader reader(read, "a.h5");
  const ref::PagedAttentionProblem back = read_attention_problem(reader);
  EXPECT_EQ(back.dtype, p.dtype);
  EXPECT_EQ(back.num_heads, p.num_heads);
  EXPECT_EQ(back.scale, p.scale);
  EXPECT_EQ(back.query_layout.stride_token, p.query_layout.stride_token);
  EXPECT_EQ(back.query_layout.num_tokens, 8);
  expect_same(back.cache, p.cache);
  expect_same(back.batch, p.batch);
  expect_same(back.features, p.features);
  EXPECT_EQ(back.k_scale, p.k_scale);
  EXPECT_EQ(back.v_scale, p.v_scale);
  EXPECT_TRUE(back.query == p.query && back.key_cache == p.key_cache &&
              back.value_cache == p.value_cache);
  EXPECT_EQ(read.find("inputs/key_cache")->attrs.at("dtype"), AttrValue(std::string("fp8_e4m3")));
  EXPECT_NO_THROW(reader.refuse_unread("this test"));
}

TEST_F(ProblemAttrs, WholeCopyProblemRoundTripsWithACombinedFp8Cache) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  gen::CopySpec s;
  s.family = PC_FAMILY_GATHER_CACHED_KV;
  s.dtype = DType::kFloat16;
  s.head_size = 32;
  s.block_size = 4;
  s.num_kv_heads = 2;
  s.num_blocks = 5;
  s.slot_mapping = {3, -1, 17, 8, 0};
  s.cache.kind = ref::CacheKind::kHND;
  s.cache.kv_dtype = DType::kFloat8E5M2;
  s.cache.scale_kind = ref::ScaleKind::kPerTensor;
  s.cache.k_scale = {0.5f};
  s.cache.v_scale = {0.125f};
  s.cache.combined = true;
  s.dequantize = true;
  s.content_seed = seed_;
  const ref::CacheCopyProblem p = gen::materialize(s);
  GoldenFile file;
  write_copy_problem(s.family, p, file);
  EXPECT_EQ(file.find("inputs/value_cache"), nullptr) << "a combined cache is one dataset";
  const GoldenFile read = through_disk(file);
  GoldenReader reader(read, "a.h5");
  const ref::CacheCopyProblem back = read_copy_problem(reader);
  EXPECT_EQ(read.attrs.at("family"), AttrValue(std::string("gather_cached_kv")));
  EXPECT_EQ(back.dtype, p.dtype);
  EXPECT_TRUE(back.dequantize);
  expect_same(back.cache, p.cache);
  EXPECT_EQ(back.slot_mapping, p.slot_mapping);
  EXPECT_EQ(back.k_scale, p.k_scale);
  EXPECT_TRUE(back.key_cache == p.key_cache && back.key == p.key && back.value == p.value);
  EXPECT_TRUE(back.value_cache.empty());
  EXPECT_NO_THROW(reader.refuse_unread("this test"));
}

/// Reading `file` edited by `edit` throws a GoldenError naming `object` and `words`.
void expect_refused(GoldenFile file, const std::function<void(GoldenFile&)>& edit,
                    const std::string& object, const std::string& words) {
  edit(file);
  GoldenReader reader(file, "x.h5");
  try {
    (void)read_attention_problem(reader);
    ADD_FAILURE() << "accepted; expected an error naming " << object;
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.dataset, object) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST_F(ProblemAttrs, ReadersNameWhatIsMissingOrWrong) {
  GoldenFile file;
  write_attention_problem(gen::materialize(feature_rich_spec(seed_)), file);
  expect_refused(
      file, [](GoldenFile& f) { f.attrs.erase("cache_kind"); }, "attribute cache_kind", "missing");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["cache_kind"] = std::string("zigzag"); },
      "attribute cache_kind", "zigzag");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["cache_dtype"] = int64_t{3}; }, "attribute cache_dtype",
      "wrong type");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["feature_causal"] = int64_t{2}; },
      "attribute feature_causal", "must be 0 or 1");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["cache_key_stride_slot"] = int64_t{1}; },
      "attributes cache_*", "");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["cache_scale_kind"] = std::string("per_tensor"); },
      "inputs/k_scale", "wrong shape");
  expect_refused(
      file,
      [](GoldenFile& f) {
        f.datasets.erase(
            std::remove_if(f.datasets.begin(), f.datasets.end(),
                           [](const GoldenDataset& d) { return d.path == "inputs/sinks"; }),
            f.datasets.end());
      },
      "inputs/sinks", "missing dataset");
  expect_refused(
      file, [](GoldenFile& f) { f.attrs["feature_window"] = int64_t{-3}; }, "inputs",
      "inconsistent problem");
}

}  // namespace
}  // namespace pagecheck::verify::golden
