/// The seeded reference-versus-oracle self-check.
#include "pagecheck/verify/reference_selfcheck.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <random>
#include <stdexcept>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/dense_oracle.h"
#include "pagecheck/verify/oracle_agreement.h"
#include "pagecheck/verify/selfcheck_problems.h"

namespace pagecheck::verify {
namespace {

constexpr int64_t kHeadSizes[] = {64, 80, 96, 112, 128, 192, 256, 16, 32};
constexpr int64_t kBlockSizes[] = {8, 16, 32};
constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
constexpr ref::CacheKind kKinds[] = {ref::CacheKind::kXSplit, ref::CacheKind::kNHD,
                                     ref::CacheKind::kHND};
constexpr double kSpreads[] = {0.5, 1.0, 2.0, 3.0};
constexpr float kSoftCaps[] = {5.0f, 30.0f, 50.0f};

/// Picks an element of a small array.
template <typename T, std::size_t N>
T pick(std::mt19937_64& rng, const T (&values)[N]) {
  return values[rng() % N];
}

/// Rotation of case k = index / 3 inside its family: dtype and head size rotate so that every
/// (dtype, head size) pair appears within 27 cases of a family, every (dtype, cache kind) pair
/// within 9; every fourth case (from the second) has an e4m3 cache and every eighth (from the
/// fourth) an e5m2 one, their scales alternating between per tensor and per kv head.
struct Rotation {
  DType dtype;
  int64_t head_size;
  ref::CacheKind kind;
  std::optional<DType> cache_dtype;
  ref::ScaleKind scale_kind = ref::ScaleKind::kNone;
};
Rotation rotate(int index) {
  const int k = index / 3;
  Rotation r{kDTypes[(k + k / 9) % 3], kHeadSizes[k % 9], kKinds[(k / 3) % 3], std::nullopt};
  if (k % 4 == 1 || k % 8 == 3) {
    r.cache_dtype = k % 4 == 1 ? DType::kFloat8E4M3 : DType::kFloat8E5M2;
    r.scale_kind = (k / 4) % 2 == 0 ? ref::ScaleKind::kPerTensor : ref::ScaleKind::kPerKvHead;
  }
  return r;
}

AttentionSpec attention_spec(std::mt19937_64& rng, int index) {
  const Rotation r = rotate(index);
  AttentionSpec spec;
  spec.dtype = r.dtype;
  spec.head_size = r.head_size;
  spec.kind = r.kind;
  spec.cache_dtype = r.cache_dtype;
  spec.scale_kind = r.scale_kind;
  spec.combined = rng() % 4 == 0;
  spec.block_size = pick(rng, kBlockSizes);
  const int64_t groups[] = {1, 2, 4};
  spec.num_kv_heads = pick(rng, groups);
  spec.num_heads = spec.num_kv_heads * (index % 4 == 0 ? 4 : pick(rng, groups));
  if (index % 5 == 0) spec.num_kv_heads = 1;  // MQA
  const int32_t bs = static_cast<int32_t>(spec.block_size);
  // Edge lengths every time, plus one random length up to four blocks, and now and then a
  // padding row (context 0).
  spec.context_lens = {1, bs, bs - 1 > 0 ? bs - 1 : 1, bs + 1,
                       static_cast<int32_t>(1 + rng() % (4 * spec.block_size))};
  if (index % 7 == 0) spec.context_lens.push_back(0);
  std::shuffle(spec.context_lens.begin(), spec.context_lens.end(), rng);
  // Half the cases decode; the others have 1..8 new tokens per sequence (any for context 0).
  if (rng() % 2 == 0) {
    for (int32_t ctx : spec.context_lens) {
      const int32_t q = static_cast<int32_t>(1 + rng() % 8);
      spec.query_lens.push_back(ctx == 0 ? q : std::min(q, ctx));
    }
  }
  spec.alibi = (index / 3) % 2 == 1;
  spec.sinks = rng() % 3 == 0;
  spec.window = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % (2 * spec.block_size)) : 0;
  spec.soft_cap = rng() % 4 == 0 ? pick(rng, kSoftCaps) : 0.0f;
  spec.causal = rng() % 5 != 0;
  spec.share_prefix = rng() % 3 == 0;
  spec.extra_blocks = static_cast<int64_t>(rng() % 4);
  spec.extra_table_cols = static_cast<int64_t>(rng() % 3);
  spec.query_pad = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % 8) : 0;
  spec.cache_pad = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % 4) : 0;
  spec.spread = pick(rng, kSpreads);
  spec.seed = rng();
  return spec;
}

CopySpec copy_spec(std::mt19937_64& rng, int index) {
  const Rotation r = rotate(index);
  CopySpec spec;
  spec.dtype = r.dtype;
  spec.head_size = r.head_size;
  spec.kind = r.kind;
  spec.cache_dtype = r.cache_dtype;
  spec.scale_kind = r.scale_kind;
  // An fp8 gather converts (dequantize) or, every other time, hands out the raw codes.
  if (r.cache_dtype && (index / 3) % 8 < 4) {
    spec.dequantize = index % 3 == 1;
  } else if (r.cache_dtype) {
    spec.dtype = *r.cache_dtype;
  }
  spec.combined = rng() % 4 == 0;
  spec.block_size = pick(rng, kBlockSizes);
  const int64_t kv_heads[] = {1, 2, 4, 8};
  spec.num_kv_heads = pick(rng, kv_heads);
  spec.num_blocks = 2 + static_cast<int64_t>(rng() % 5);
  const int64_t slots = spec.num_blocks * spec.block_size;
  spec.num_tokens = index % 7 == 0 ? slots : 1 + static_cast<int64_t>(rng() % slots);
  const double skips[] = {0.0, 0.25, 0.5, 1.0};
  spec.skip_fraction = pick(rng, skips);
  spec.token_pad = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % 8) : 0;
  spec.cache_pad = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % 4) : 0;
  spec.seed = rng();
  return spec;
}

void run_attention_case(const AttentionSpec& spec, SelfcheckCase& c) {
  const ref::PagedAttentionProblem problem = make_attention_problem(spec);
  const ref::PagedAttentionResult result = ref::paged_attention(problem, {1});
  const oracle::OracleAttention expected = oracle::paged_attention(problem);
  const AttentionAgreement agreement = compare_with_oracle(problem, result, expected);
  c.passed = agreement.passed();
  c.detail = agreement.describe();
}

/// Runs a copy family on a problem whose outputs start NaN-poisoned, and compares bytes.
void run_copy_case(const CopySpec& spec, bool gather, SelfcheckCase& c) {
  ref::CacheCopyProblem problem = make_copy_problem(spec);
  if (gather) {
    fill_nan(problem.dtype, problem.key);
    fill_nan(problem.dtype, problem.value);
  }
  const oracle::CopyBuffers expected =
      gather ? oracle::gather_cached_kv(problem) : oracle::reshape_and_cache(problem);
  gather ? ref::gather_cached_kv(problem) : ref::reshape_and_cache(problem);
  const std::vector<std::byte>& key = gather ? problem.key : problem.key_cache;
  const std::vector<std::byte>& value = gather ? problem.value : problem.value_cache;
  const int64_t key_diff = first_byte_difference(key, expected.key);
  const int64_t value_diff = first_byte_difference(value, expected.value);
  c.passed = key_diff < 0 && value_diff < 0;
  const char* what = gather ? "key/value" : "key_cache/value_cache";
  c.detail = c.passed ? std::string(what) + " bytes identical"
                      : std::string(what) + " differ from the oracle at byte " +
                            std::to_string(key_diff >= 0 ? key_diff : value_diff) + " of " +
                            (key_diff >= 0 ? "key" : "value");
}

}  // namespace

bool SelfcheckReport::all_passed() const {
  return !cases.empty() &&
         std::all_of(cases.begin(), cases.end(), [](const SelfcheckCase& c) { return c.passed; });
}

SelfcheckReport run_reference_selfcheck(uint64_t seed, int num_cases) {
  if (num_cases < 1) {
    throw std::invalid_argument("selfcheck: the number of cases (" + std::to_string(num_cases) +
                                ") must be at least 1");
  }
  std::mt19937_64 rng(seed);
  SelfcheckReport report;
  for (int i = 0; i < num_cases; ++i) {
    SelfcheckCase c;
    const int family = i % 3;
    const auto start = std::chrono::steady_clock::now();
    try {
      if (family == 0) {
        const AttentionSpec spec = attention_spec(rng, i);
        c.family = "paged_attention";
        c.name = c.family + "#" + std::to_string(i) + " " + spec.describe();
        run_attention_case(spec, c);
      } else {
        const CopySpec spec = copy_spec(rng, i);
        c.family = family == 1 ? "gather_cached_kv" : "reshape_and_cache";
        c.name = c.family + "#" + std::to_string(i) + " " + spec.describe();
        run_copy_case(spec, family == 1, c);
      }
    } catch (const std::exception& e) {
      c.passed = false;
      c.detail = std::string("exception: ") + e.what();
    }
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.cases.push_back(std::move(c));
  }
  return report;
}

}  // namespace pagecheck::verify
