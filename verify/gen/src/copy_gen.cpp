/// Generator of KV-cache copy cases (gather_cached_kv, reshape_and_cache).
#include <algorithm>
#include <stdexcept>

#include "cache_draw.h"
#include "fp8_scales.h"
#include "gen_util.h"
#include "pagecheck/verify/gen/generators.h"

namespace pagecheck::verify::gen {
namespace {

using detail::draw_between;

enum class SkipPattern { kNone, kSome, kAll };

/// Where the live tokens go: consecutive slots from a random start (prefill), distinct slots
/// in random order (decode batches), one token per block over many blocks, or every slot of
/// whole blocks.
enum class SlotLayout { kConsecutive, kRandom, kSpread, kWholeBlocks };

/// Tokens past which a case is no longer spread one per block (its pool stays small).
constexpr int64_t kSpreadTokens = 512;

CopySpec draw_copy(const VariantCaps& caps, const GenOptions& options) {
  CopySpec s;
  s.family = caps.family;
  const int size = detail::current_size();
  const bool large = options.large == LargeCache::kAlways && caps.has(PC_CAP_LARGE_CACHE);
  // A wide case: 16-64 kv heads (one token's keys over up to 2048 16-byte vectors), few tokens.
  const bool wide = !large && detail::pick<bool>({{5, false}, {1, true}});
  const std::vector<DType> dtypes = detail::dtypes_for(caps, large);
  s.dtype = wide && detail::contains(dtypes, DType::kFloat32) &&
                    detail::pick<bool>({{1, false}, {1, true}})
                ? DType::kFloat32
                : detail::pick_of(dtypes);
  s.head_size = wide && detail::pick<bool>({{1, false}, {1, true}})
                    ? *std::max_element(caps.head_sizes.begin(), caps.head_sizes.end())
                    : detail::pick_of(caps.head_sizes);
  s.block_size = detail::pick_of(caps.block_sizes);
  const int64_t bs = s.block_size;

  // Tokens: one, a prime count, any count, or (few, with 1-8 kv heads) 512-4096: up to 2^23
  // elements per tensor (4096 tokens x 8 kv heads x head 256), where kernels switch to several
  // items per thread or staged paths.
  const int64_t token_cap = large ? 16 : wide ? 8 : 2 + size / 2;
  const std::size_t token_kind =
      detail::draw_weighted({3, 2, 4, static_cast<std::size_t>(large || wide ? 0 : 1)});
  int64_t num_tokens = token_kind == 0   ? 1
                       : token_kind == 1 ? detail::pick_of(detail::primes_up_to(token_cap))
                       : token_kind == 2 ? draw_between(1, token_cap)
                                         : detail::pick<int64_t>({{2, 512}, {2, 1024}, {2, 4096}});
  const bool many = token_kind == 3;
  // (The never drawn 1 and 2 first: a failing wide case shrinks toward few heads.)
  s.num_kv_heads = wide
                       ? detail::pick<int64_t>({{0, 1}, {0, 2}, {1, 16}, {2, 32}, {1, 40}, {4, 64}})
                   : many ? detail::pick<int64_t>({{2, 1}, {1, 2}, {1, 4}, {2, 8}})
                          : draw_between(1, large ? 2 : 1 + size / 15);
  const SlotLayout layout =
      large ? detail::pick<SlotLayout>({{1, SlotLayout::kConsecutive}, {2, SlotLayout::kRandom}})
            : detail::pick<SlotLayout>({{2, SlotLayout::kConsecutive},
                                        {4, SlotLayout::kRandom},
                                        {1, SlotLayout::kSpread},
                                        {1, SlotLayout::kWholeBlocks}});
  if (layout == SlotLayout::kSpread) num_tokens = std::clamp<int64_t>(num_tokens, 8, kSpreadTokens);
  if (layout == SlotLayout::kWholeBlocks) num_tokens = bs * std::max<int64_t>(1, num_tokens / bs);

  const SkipPattern skip =
      layout == SlotLayout::kWholeBlocks
          ? SkipPattern::kNone
          : detail::pick<SkipPattern>(
                {{3, SkipPattern::kNone}, {4, SkipPattern::kSome}, {1, SkipPattern::kAll}});
  std::vector<bool> skipped(num_tokens, skip == SkipPattern::kAll);
  if (skip == SkipPattern::kSome && num_tokens <= 64) {
    for (int64_t t = 0; t < num_tokens; ++t) {
      skipped[t] = detail::pick<bool>({{3, false}, {1, true}});
    }
  } else if (skip == SkipPattern::kSome) {  // many tokens: a seeded quarter, not 4096 choices
    const uint64_t skip_seed = detail::draw_seed();
    for (int64_t t = 0; t < num_tokens; ++t) skipped[t] = detail::mix_index(skip_seed, t) % 4 == 0;
  }
  if (large) skipped[0] = false;  // a large case must write / read beyond 2^31
  int64_t live = 0;
  for (bool k : skipped) live += k ? 0 : 1;

  // Gather may also read one slot twice.
  const bool repeat = s.family == PC_FAMILY_GATHER_CACHED_KV && live >= 2 &&
                      detail::pick<bool>({{5, false}, {1, true}});
  const int64_t start =
      layout == SlotLayout::kWholeBlocks ? bs * draw_between(0, 1) : draw_between(0, 2 * bs - 1);
  const int64_t blocks_needed =
      layout == SlotLayout::kSpread ? live + 1 : detail::ceil_div(start + live, bs) + 1;
  const int64_t unused = detail::draw_weighted({2, 3}) == 0 ? 0 : draw_between(1, 3 + size / 10);
  const uint64_t order_seed = detail::draw_seed();

  // Cache and strides (only what the variant declares it accepts): a gather writes the
  // contiguous tensors (strided outputs), reshape_and_cache reads them (token / head strides).
  detail::CacheDraw cache =
      detail::draw_cache(caps, s.dtype, detail::kv_options(caps, s.dtype), s.num_kv_heads, large);
  s.cache = cache.cache;
  s.dequantize = s.family == PC_FAMILY_GATHER_CACHED_KV && s.cache.kv_dtype != s.dtype;
  const int64_t x = dtype_x(s.dtype);
  const bool gather = s.family == PC_FAMILY_GATHER_CACHED_KV;
  const bool token = gather ? caps.has(PC_CAP_STRIDED_OUTPUT) : caps.has(PC_CAP_TOKEN_STRIDE);
  const bool head = gather ? caps.has(PC_CAP_STRIDED_OUTPUT) : caps.has(PC_CAP_HEAD_STRIDE);
  if ((token || head) && !large && detail::pick<bool>({{3, false}, {2, true}})) {
    const auto pad = [&] {
      return TokenPadding{token ? x * draw_between(0, 8) : 0, head ? x * draw_between(0, 2) : 0};
    };
    s.key_pad = pad();
    s.value_pad = pad();
  }

  // Pool; a large pool keeps the written blocks beyond 2^31 elements (and block 0).
  s.num_blocks = blocks_needed + unused;
  int64_t base_block = 0;
  if (large) {
    s.num_blocks = detail::large_pool_blocks(cache_layout(s).key.block, blocks_needed);
    base_block = s.num_blocks - blocks_needed;
  }
  std::vector<int64_t> slots(live);
  if (layout == SlotLayout::kConsecutive || layout == SlotLayout::kWholeBlocks) {
    for (int64_t i = 0; i < live; ++i) slots[i] = base_block * bs + start + i;
  } else if (layout == SlotLayout::kSpread) {
    const std::vector<int64_t> blocks = detail::permutation(s.num_blocks, order_seed);
    for (int64_t i = 0; i < live; ++i) {
      slots[i] = blocks[i] * bs + static_cast<int64_t>(detail::mix_index(order_seed, i) % bs);
    }
  } else {
    const int64_t window = (large ? blocks_needed : s.num_blocks) * bs;
    const std::vector<int64_t> perm = detail::permutation(window, order_seed);
    for (int64_t i = 0; i < live; ++i) slots[i] = base_block * bs + perm[i];
    if (large && live > 1) slots[1] = perm[1] % bs;  // one slot in block 0 as well
  }
  if (repeat) slots[live - 1] = slots[0];
  s.slot_mapping.assign(num_tokens, -1);
  for (int64_t t = 0, i = 0; t < num_tokens; ++t) {
    if (!skipped[t]) s.slot_mapping[t] = slots[i++];
  }

  // Full-range contents only where declared (weight 0 otherwise: the same draws as before).
  const std::size_t full_range = caps.has(PC_CAP_FULL_RANGE) ? 1 : 0;
  s.regime = detail::pick<Regime>(
      {{3, Regime::kMixed}, {2, Regime::kBits}, {full_range, Regime::kFullRange}});
  const double nominal = detail::nominal_scale(detail::copy_magnitude(s), s.cache.kv_dtype);
  detail::finish_scales(cache, nominal, nominal);
  s.cache.k_scale = cache.cache.k_scale;
  s.cache.v_scale = cache.cache.v_scale;
  s.content_seed = detail::draw_seed();
  return s;
}

}  // namespace

rc::Gen<CopySpec> copy_spec(const VariantCaps& caps, const GenOptions& options) {
  caps.validate();
  if (caps.family != PC_FAMILY_GATHER_CACHED_KV && caps.family != PC_FAMILY_RESHAPE_AND_CACHE) {
    throw std::invalid_argument("copy_spec: variant '" + caps.name + "' is not a copy variant");
  }
  detail::dtypes_for(caps, false);  // throws now, not inside the generator
  return rc::gen::exec([caps, options] { return draw_copy(caps, options); });
}

}  // namespace pagecheck::verify::gen
