/// Deterministic inputs of the golden cases (see golden_cases.h for the draw order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "case_random.h"
#include "pagecheck/verify/golden_cases.h"

namespace pagecheck::verify::golden {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

void require(bool ok, const CaseDefinition& def, const char* what) {
  if (!ok) throw std::invalid_argument("golden case " + def.name + ": " + what);
}

/// Fills `slots_used[b]` slots of every physical block b of both caches, key pass then value
/// pass, each over [block, slot, kv head, dim].
void fill_cache(CaseRng& rng, DType dtype, const ref::PagedCacheLayout& cache,
                const std::vector<std::vector<bool>>& filled, std::vector<std::byte>* key,
                std::vector<std::byte>* value) {
  *key = nan_buffer(dtype, cache.key_span());
  *value = nan_buffer(dtype, cache.value_span());
  for (int pass = 0; pass < 2; ++pass) {
    std::byte* base = pass == 0 ? key->data() : value->data();
    for (int64_t b = 0; b < cache.num_blocks; ++b) {
      for (int64_t slot = 0; slot < cache.block_size; ++slot) {
        if (!filled[static_cast<std::size_t>(b)][static_cast<std::size_t>(slot)]) continue;
        for (int64_t h = 0; h < cache.num_kv_heads; ++h) {
          for (int64_t d = 0; d < cache.head_size; ++d) {
            const int64_t at =
                pass == 0 ? cache.key_offset(b, h, d, slot) : cache.value_offset(b, h, d, slot);
            store_element(dtype, base, at, rng.mixed());
          }
        }
      }
    }
  }
}

/// Random [token, head, dim] contents in `layout`, NaN in the stride padding.
std::vector<std::byte> token_tensor(CaseRng& rng, DType dtype, const ref::TokenLayout& layout,
                                    double amplitude) {
  std::vector<std::byte> data = nan_buffer(dtype, layout.span());
  for (int64_t t = 0; t < layout.num_tokens; ++t) {
    for (int64_t h = 0; h < layout.num_heads; ++h) {
      for (int64_t d = 0; d < layout.head_size; ++d) {
        store_element(dtype, data.data(), layout.offset(t, h, d), amplitude * rng.mixed());
      }
    }
  }
  return data;
}

}  // namespace

std::vector<std::byte> nan_buffer(DType dtype, int64_t elements) {
  const std::size_t size = dtype_size(dtype);
  std::vector<std::byte> data(static_cast<std::size_t>(elements) * size);
  const uint32_t f32 = 0x7FC00000u;
  const uint16_t f16 = dtype == DType::kFloat16 ? 0x7E00u : 0x7FC0u;
  for (int64_t i = 0; i < elements; ++i) {
    std::memcpy(data.data() + i * size, size == 4 ? static_cast<const void*>(&f32) : &f16, size);
  }
  return data;
}

ref::PagedCacheLayout case_cache_layout(const CaseDefinition& def, int64_t num_blocks) {
  auto layout = ref::PagedCacheLayout::packed(def.dtype, num_blocks, def.num_kv_heads,
                                              def.head_size, def.block_size);
  const int64_t p = def.padding;
  if (p == 0) return layout;
  layout.key_stride_slot = layout.x + p;
  layout.key_stride_group = layout.block_size * layout.key_stride_slot + p;
  layout.key_stride_head = (layout.head_size / layout.x) * layout.key_stride_group + p;
  layout.key_stride_block = layout.num_kv_heads * layout.key_stride_head + p;
  layout.value_stride_dim = layout.block_size + p;
  layout.value_stride_head = layout.head_size * layout.value_stride_dim + p;
  layout.value_stride_block = layout.num_kv_heads * layout.value_stride_head + p;
  return layout;
}

ref::TokenLayout case_token_layout(const CaseDefinition& def, int64_t num_tokens,
                                   int64_t num_heads) {
  auto layout = ref::TokenLayout::packed(num_tokens, num_heads, def.head_size);
  layout.stride_head += def.padding;
  layout.stride_token = num_heads * layout.stride_head + def.padding;
  return layout;
}

ref::PagedAttentionProblem generate_attention_problem(const CaseDefinition& def) {
  require(def.family == PC_FAMILY_PAGED_ATTENTION, def, "not a paged-attention case");
  require(!def.context_lens.empty() && def.num_heads > 0 && def.block_size > 0, def,
          "needs context_lens, num_heads and block_size");
  const auto num_seqs = static_cast<int64_t>(def.context_lens.size());
  const int64_t bs = def.block_size;
  std::vector<int64_t> seq_blocks;
  for (int32_t len : def.context_lens) {
    require(len >= 1, def, "context lengths must be >= 1");
    seq_blocks.push_back(ceil_div(len, bs));
  }
  require(def.shared_prefix_blocks <= seq_blocks[0], def, "shares more blocks than seq 0 has");
  int64_t needed = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t n = seq_blocks[static_cast<std::size_t>(s)];
    needed += s == 0 ? n : n - std::min(n, def.shared_prefix_blocks);
  }
  const int64_t num_blocks = needed + def.spare_blocks;
  const int64_t max_seq_blocks = *std::max_element(seq_blocks.begin(), seq_blocks.end());

  CaseRng rng(def.seed);
  const std::vector<int64_t> physical = rng.sample(num_blocks, num_blocks);

  ref::PagedAttentionProblem p;
  p.dtype = def.dtype;
  p.num_seqs = num_seqs;
  p.num_heads = def.num_heads;
  p.max_blocks_per_seq = max_seq_blocks + def.extra_table_columns;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(def.head_size)));
  p.cache = case_cache_layout(def, num_blocks);
  p.query_layout = case_token_layout(def, num_seqs, def.num_heads);
  p.context_lens = def.context_lens;
  p.block_table.assign(static_cast<std::size_t>(num_seqs * p.max_blocks_per_seq),
                       kBlockTablePoison);
  std::vector<std::vector<bool>> filled(static_cast<std::size_t>(num_blocks),
                                        std::vector<bool>(static_cast<std::size_t>(bs), false));
  std::size_t next = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t len = def.context_lens[static_cast<std::size_t>(s)];
    for (int64_t j = 0; j < seq_blocks[static_cast<std::size_t>(s)]; ++j) {
      const bool shared = s > 0 && j < def.shared_prefix_blocks;
      const auto block = shared ? p.block_table[static_cast<std::size_t>(j)]
                                : static_cast<int32_t>(physical[next++]);
      p.block_table[static_cast<std::size_t>(s * p.max_blocks_per_seq + j)] = block;
      for (int64_t slot = 0; slot < std::min(bs, len - j * bs); ++slot) {
        filled[static_cast<std::size_t>(block)][static_cast<std::size_t>(slot)] = true;
      }
    }
  }
  p.query = token_tensor(rng, def.dtype, p.query_layout, def.query_amplitude);
  fill_cache(rng, def.dtype, p.cache, filled, &p.key_cache, &p.value_cache);
  if (def.alibi) {
    for (int64_t h = 0; h < def.num_heads; ++h) {
      p.alibi_slopes.push_back(static_cast<float>(
          std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(def.num_heads))));
    }
  }
  p.validate();
  return p;
}

ref::CacheCopyProblem generate_copy_problem(const CaseDefinition& def) {
  require(def.family != PC_FAMILY_PAGED_ATTENTION, def, "not a cache-copy case");
  require(def.num_tokens > 0 && def.num_skipped <= def.num_tokens, def,
          "needs num_tokens > 0 and num_skipped <= num_tokens");
  const int64_t bs = def.block_size;
  const int64_t num_blocks =
      ceil_div(def.num_tokens, bs) + ceil_div(def.preexisting_tokens, bs) + def.spare_blocks;
  const int64_t total_slots = num_blocks * bs;
  const bool reshape = def.family == PC_FAMILY_RESHAPE_AND_CACHE;

  CaseRng rng(def.seed);
  ref::CacheCopyProblem p;
  p.dtype = def.dtype;
  p.cache = case_cache_layout(def, num_blocks);
  p.key_layout = case_token_layout(def, def.num_tokens, def.num_kv_heads);
  p.value_layout = p.key_layout;
  p.slot_mapping = rng.sample(total_slots, def.num_tokens);
  for (int64_t t : rng.sample(def.num_tokens, def.num_skipped)) {
    p.slot_mapping[static_cast<std::size_t>(t)] = -1;
  }
  std::vector<std::vector<bool>> filled(static_cast<std::size_t>(num_blocks),
                                        std::vector<bool>(static_cast<std::size_t>(bs), false));
  const auto mark = [&](int64_t slot) {
    filled[static_cast<std::size_t>(slot / bs)][static_cast<std::size_t>(slot % bs)] = true;
  };
  if (reshape) {
    for (int64_t slot : rng.sample(total_slots, def.preexisting_tokens)) mark(slot);
  } else {
    for (int64_t slot : p.slot_mapping) {
      if (slot >= 0) mark(slot);
    }
  }
  fill_cache(rng, def.dtype, p.cache, filled, &p.key_cache, &p.value_cache);
  p.key = token_tensor(rng, def.dtype, p.key_layout, 1.0);
  p.value = token_tensor(rng, def.dtype, p.value_layout, 1.0);
  p.validate();
  return p;
}

}  // namespace pagecheck::verify::golden
