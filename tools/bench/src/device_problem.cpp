/// Builds bench inputs on the device (see device_problem.h).
#include "device_problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "bench_kernels.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::bench::detail {

namespace {

pc_cache_layout to_pc(const ref::PagedCacheLayout& l) {
  pc_cache_layout c{};
  c.num_blocks = l.num_blocks;
  c.num_kv_heads = l.num_kv_heads;
  c.head_size = l.head_size;
  c.block_size = l.block_size;
  c.x = l.x;
  c.key_stride_block = l.key_stride_block;
  c.key_stride_head = l.key_stride_head;
  c.key_stride_group = l.key_stride_group;
  c.key_stride_slot = l.key_stride_slot;
  c.value_stride_block = l.value_stride_block;
  c.value_stride_head = l.value_stride_head;
  c.value_stride_dim = l.value_stride_dim;
  return c;
}

/// The pool's block indices in random order.
std::vector<int64_t> permuted_blocks(int64_t num_blocks, uint64_t seed) {
  std::vector<int64_t> blocks(static_cast<std::size_t>(num_blocks));
  std::iota(blocks.begin(), blocks.end(), int64_t{0});
  std::mt19937_64 rng(seed);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  return blocks;
}

}  // namespace

DeviceProblem::DeviceProblem(const BenchShape& shape, uint64_t seed, cudaStream_t stream)
    : shape_(shape) {
  shape.validate();
  const auto dtype = static_cast<pc_dtype>(shape.dtype);
  const int64_t elem = static_cast<int64_t>(dtype_size(shape.dtype));
  const ref::PagedCacheLayout layout = ref::PagedCacheLayout::packed(
      shape.dtype, shape.num_blocks, shape.num_kv_heads, shape.head_size, shape.block_size);
  cache_ = to_pc(layout);
  key_span_ = layout.key_span();
  value_span_ = layout.value_span();
  key_cache_ = DeviceBuffer(static_cast<std::size_t>(key_span_ * elem));
  value_cache_ = DeviceBuffer(static_cast<std::size_t>(value_span_ * elem));
  counter_ = DeviceBuffer(sizeof(unsigned long long));
  const std::vector<int64_t> blocks = permuted_blocks(shape.num_blocks, seed ^ 0xB10C);

  if (shape.family == PC_FAMILY_PAGED_ATTENTION) {
    fill_random(key_cache_.get(), key_span_, dtype, seed + 1, -1.0f, 1.0f, stream);
    fill_random(value_cache_.get(), value_span_, dtype, seed + 2, -1.0f, 1.0f, stream);
    const int64_t q_elems = shape.num_seqs * shape.num_heads * shape.head_size;
    query_ = DeviceBuffer(static_cast<std::size_t>(q_elems * elem));
    out_ = DeviceBuffer(static_cast<std::size_t>(q_elems * elem));
    fill_random(query_.get(), q_elems, dtype, seed + 3, -1.0f, 1.0f, stream);
    token_elems_ = q_elems;
    const int64_t bps = (shape.context_len + shape.block_size - 1) / shape.block_size;
    std::vector<int32_t> table(static_cast<std::size_t>(shape.num_seqs * bps));
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int32_t>(blocks[i]);
    block_table_ = upload(table, stream);
    context_lens_ = upload(std::vector<int32_t>(static_cast<std::size_t>(shape.num_seqs),
                                                static_cast<int32_t>(shape.context_len)),
                           stream);
    pc_paged_attention_args& a = attention_;
    a.dtype = dtype;
    a.num_seqs = shape.num_seqs;
    a.num_heads = shape.num_heads;
    a.max_blocks_per_seq = bps;
    a.max_context_len = shape.context_len;
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_size)));
    a.query = query_.get();
    a.query_stride_seq = shape.num_heads * shape.head_size;
    a.query_stride_head = shape.head_size;
    a.key_cache = key_cache_.get();
    a.value_cache = value_cache_.get();
    a.cache = cache_;
    a.block_table = block_table_.as<const int32_t>();
    a.block_table_stride = bps;
    a.context_lens = context_lens_.as<const int32_t>();
    a.alibi_slopes = nullptr;
    a.out = out_.get();
    a.out_stride_seq = shape.num_heads * shape.head_size;
    a.out_stride_head = shape.head_size;
  } else {
    // Token t goes to slot t % block_size of the (t / block_size)-th randomly chosen block.
    std::vector<int64_t> slots(static_cast<std::size_t>(shape.num_tokens));
    for (int64_t t = 0; t < shape.num_tokens; ++t) {
      slots[static_cast<std::size_t>(t)] =
          blocks[static_cast<std::size_t>(t / shape.block_size)] * shape.block_size +
          t % shape.block_size;
    }
    slot_mapping_ = upload(slots, stream);
    token_elems_ = shape.num_tokens * shape.num_kv_heads * shape.head_size;
    key_ = DeviceBuffer(static_cast<std::size_t>(token_elems_ * elem));
    value_ = DeviceBuffer(static_cast<std::size_t>(token_elems_ * elem));
    const int64_t stride_token = shape.num_kv_heads * shape.head_size;
    if (shape.family == PC_FAMILY_GATHER_CACHED_KV) {
      fill_random(key_cache_.get(), key_span_, dtype, seed + 1, -1.0f, 1.0f, stream);
      fill_random(value_cache_.get(), value_span_, dtype, seed + 2, -1.0f, 1.0f, stream);
      pc_gather_args& g = gather_;
      g.dtype = dtype;
      g.num_tokens = shape.num_tokens;
      g.key_cache = key_cache_.get();
      g.value_cache = value_cache_.get();
      g.cache = cache_;
      g.slot_mapping = slot_mapping_.as<const int64_t>();
      g.key_out = key_.get();
      g.key_stride_token = stride_token;
      g.key_stride_head = shape.head_size;
      g.value_out = value_.get();
      g.value_stride_token = stride_token;
      g.value_stride_head = shape.head_size;
    } else {
      fill_random(key_.get(), token_elems_, dtype, seed + 1, -1.0f, 1.0f, stream);
      fill_random(value_.get(), token_elems_, dtype, seed + 2, -1.0f, 1.0f, stream);
      pc_reshape_and_cache_args& r = reshape_;
      r.dtype = dtype;
      r.num_tokens = shape.num_tokens;
      r.key = key_.get();
      r.key_stride_token = stride_token;
      r.key_stride_head = shape.head_size;
      r.value = value_.get();
      r.value_stride_token = stride_token;
      r.value_stride_head = shape.head_size;
      r.key_cache = key_cache_.get();
      r.value_cache = value_cache_.get();
      r.cache = cache_;
      r.slot_mapping = slot_mapping_.as<const int64_t>();
    }
  }
  PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
}

const void* DeviceProblem::args() const {
  switch (shape_.family) {
    case PC_FAMILY_PAGED_ATTENTION:
      return &attention_;
    case PC_FAMILY_GATHER_CACHED_KV:
      return &gather_;
    case PC_FAMILY_RESHAPE_AND_CACHE:
      return &reshape_;
  }
  return nullptr;
}

void DeviceProblem::poison_outputs(cudaStream_t stream) {
  auto poison = [&](DeviceBuffer& b) {
    PAGECHECK_CUDA_CHECK(cudaMemsetAsync(b.get(), 0xFF, b.bytes(), stream));
  };
  switch (shape_.family) {
    case PC_FAMILY_PAGED_ATTENTION:
      poison(out_);
      break;
    case PC_FAMILY_GATHER_CACHED_KV:
      poison(key_);
      poison(value_);
      break;
    case PC_FAMILY_RESHAPE_AND_CACHE:
      poison(key_cache_);
      poison(value_cache_);
      break;
  }
}

int64_t DeviceProblem::count_nonfinite_elements(const void* data, int64_t count,
                                                cudaStream_t stream) {
  PAGECHECK_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned long long), stream));
  count_nonfinite(data, count, static_cast<pc_dtype>(shape_.dtype),
                  counter_.as<unsigned long long>(), stream);
  unsigned long long host = 0;
  PAGECHECK_CUDA_CHECK(
      cudaMemcpyAsync(&host, counter_.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<int64_t>(host);
}

std::string DeviceProblem::check_outputs(cudaStream_t stream) {
  auto expect = [&](const char* name, const void* data, int64_t count, int64_t want) {
    const int64_t got = count_nonfinite_elements(data, count, stream);
    if (got == want) return std::string();
    return std::string(name) + ": " + std::to_string(got) + " of " + std::to_string(count) +
           " elements are NaN/inf after the launch, expected " + std::to_string(want) +
           " (outputs start as NaN; inputs are finite)";
  };
  std::string problem;
  auto add = [&](std::string p) {
    if (!p.empty()) problem += (problem.empty() ? "" : "; ") + p;
  };
  switch (shape_.family) {
    case PC_FAMILY_PAGED_ATTENTION:
      add(expect("out", out_.get(), token_elems_, 0));
      break;
    case PC_FAMILY_GATHER_CACHED_KV:
      add(expect("key_out", key_.get(), token_elems_, 0));
      add(expect("value_out", value_.get(), token_elems_, 0));
      break;
    case PC_FAMILY_RESHAPE_AND_CACHE:
      add(expect("key_cache", key_cache_.get(), key_span_, key_span_ - token_elems_));
      add(expect("value_cache", value_cache_.get(), value_span_, value_span_ - token_elems_));
      break;
  }
  return problem;
}

}  // namespace pagecheck::bench::detail
