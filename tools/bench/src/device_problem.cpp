/// Builds bench inputs on the device (see device_problem.h).
#include "device_problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "bench_kernels.h"
#include "pagecheck/reference/layout.h"
#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/abi_args.h"

namespace pagecheck::bench::detail {

namespace {

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
  const auto kv_dtype = static_cast<pc_dtype>(shape.cache_dtype());
  const int64_t elem = static_cast<int64_t>(dtype_size(shape.dtype));
  const int64_t kv_elem = static_cast<int64_t>(dtype_size(shape.cache_dtype()));
  const bool fp8 = shape.cache_dtype() != shape.dtype;
  // The problem's descriptors (no host tensors: the tensors are filled on the device); the one
  // converter (pagecheck/verify/abi_args.h) turns them into the family's ABI arguments. An fp8
  // cache has a per-tensor scale of 1 for K and V (the values stay in [-1, 1)).
  const ref::PagedCacheLayout layout = ref::make_cache_layout(
      shape.cache_kind, shape.cache_dtype(),
      ref::CacheShape{shape.num_blocks, shape.num_kv_heads, shape.head_size, shape.block_size}, {},
      false, fp8 ? ref::ScaleKind::kPerTensor : ref::ScaleKind::kNone);
  key_span_ = layout.key_span();
  value_span_ = layout.value_span();
  key_cache_ = DeviceBuffer(static_cast<std::size_t>(key_span_ * kv_elem));
  value_cache_ = DeviceBuffer(static_cast<std::size_t>(value_span_ * kv_elem));
  counter_ = DeviceBuffer(sizeof(unsigned long long));
  const std::vector<float> unit_scale = {1.0f};
  if (fp8) {
    k_scale_ = upload(unit_scale, stream);
    v_scale_ = upload(unit_scale, stream);
  }
  const std::vector<int64_t> blocks = permuted_blocks(shape.num_blocks, seed ^ 0xB10C);

  if (shape.family == PC_FAMILY_PAGED_ATTENTION) {
    fill_random(key_cache_.get(), key_span_, kv_dtype, seed + 1, -1.0f, 1.0f, stream);
    fill_random(value_cache_.get(), value_span_, kv_dtype, seed + 2, -1.0f, 1.0f, stream);
    ref::PagedAttentionProblem p;
    p.dtype = shape.dtype;
    p.num_heads = shape.num_heads;
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_size)));
    p.cache = layout;
    if (fp8) {
      p.k_scale = unit_scale;
      p.v_scale = unit_scale;
    }
    p.features.window = shape.window;
    p.features.causal = true;
    const int64_t rows = shape.num_seqs * shape.query_len;
    p.query_layout = ref::TokenLayout::packed(rows, shape.num_heads, shape.head_size);
    ref::RaggedBatch& b = p.batch;
    if (shape.query_len > 1) {
      for (int64_t s = 0; s <= shape.num_seqs; ++s) {
        b.query_start.push_back(static_cast<int32_t>(s * shape.query_len));
      }
      query_start_ = upload(b.query_start, stream);
    }
    b.num_seqs = shape.num_seqs;
    b.context_lens.assign(static_cast<std::size_t>(shape.num_seqs),
                          static_cast<int32_t>(shape.context_len));
    b.max_blocks_per_seq = (shape.context_len + shape.block_size - 1) / shape.block_size;
    b.block_table.resize(static_cast<std::size_t>(shape.num_seqs * b.max_blocks_per_seq));
    for (std::size_t i = 0; i < b.block_table.size(); ++i) {
      b.block_table[i] = static_cast<int32_t>(blocks[i]);
    }
    const int64_t q_elems = p.query_layout.span();
    query_ = DeviceBuffer(static_cast<std::size_t>(q_elems * elem));
    out_ = DeviceBuffer(static_cast<std::size_t>(q_elems * elem));
    fill_random(query_.get(), q_elems, dtype, seed + 3, -1.0f, 1.0f, stream);
    token_elems_ = q_elems;
    block_table_ = upload(b.strided_block_table(), stream);
    context_lens_ = upload(b.context_lens, stream);
    verify::AttentionPointers ptr;
    ptr.query = query_.get();
    ptr.key_cache = key_cache_.get();
    ptr.value_cache = value_cache_.get();
    ptr.context_lens = context_lens_.as<const int32_t>();
    ptr.block_table = block_table_.as<const int32_t>();
    ptr.query_start = query_start_.as<const int32_t>();
    ptr.k_scale = k_scale_.as<const float>();
    ptr.v_scale = v_scale_.as<const float>();
    ptr.out = out_.get();
    attention_ = verify::attention_args(p, p.query_layout, ptr);
  } else {
    // Token t goes to slot t % block_size of the (t / block_size)-th randomly chosen block.
    ref::CacheCopyProblem p;
    p.dtype = shape.dtype;
    p.cache = layout;
    p.dequantize = fp8 && shape.family == PC_FAMILY_GATHER_CACHED_KV;
    if (fp8) {
      p.k_scale = unit_scale;
      p.v_scale = unit_scale;
    }
    p.key_layout = ref::TokenLayout::packed(shape.num_tokens, shape.num_kv_heads, shape.head_size);
    p.value_layout = p.key_layout;
    p.slot_mapping.resize(static_cast<std::size_t>(shape.num_tokens));
    for (int64_t t = 0; t < shape.num_tokens; ++t) {
      p.slot_mapping[static_cast<std::size_t>(t)] =
          blocks[static_cast<std::size_t>(t / shape.block_size)] * shape.block_size +
          t % shape.block_size;
    }
    slot_mapping_ = upload(p.slot_mapping, stream);
    token_elems_ = p.key_layout.span();
    key_ = DeviceBuffer(static_cast<std::size_t>(token_elems_ * elem));
    value_ = DeviceBuffer(static_cast<std::size_t>(token_elems_ * elem));
    verify::CopyPointers ptr;
    ptr.key_cache = key_cache_.get();
    ptr.value_cache = value_cache_.get();
    ptr.slot_mapping = slot_mapping_.as<const int64_t>();
    ptr.key = key_.get();
    ptr.value = value_.get();
    ptr.k_scale = k_scale_.as<const float>();
    ptr.v_scale = v_scale_.as<const float>();
    if (shape.family == PC_FAMILY_GATHER_CACHED_KV) {
      fill_random(key_cache_.get(), key_span_, kv_dtype, seed + 1, -1.0f, 1.0f, stream);
      fill_random(value_cache_.get(), value_span_, kv_dtype, seed + 2, -1.0f, 1.0f, stream);
      gather_ = verify::gather_args(p, ptr);
    } else {
      fill_random(key_.get(), token_elems_, dtype, seed + 1, -1.0f, 1.0f, stream);
      fill_random(value_.get(), token_elems_, dtype, seed + 2, -1.0f, 1.0f, stream);
      reshape_ = verify::reshape_args(p, ptr);
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

int64_t DeviceProblem::count_nonfinite_elements(const void* data, int64_t count, DType dtype,
                                                cudaStream_t stream) {
  PAGECHECK_CUDA_CHECK(cudaMemsetAsync(counter_.get(), 0, sizeof(unsigned long long), stream));
  count_nonfinite(data, count, static_cast<pc_dtype>(dtype), counter_.as<unsigned long long>(),
                  stream);
  unsigned long long host = 0;
  PAGECHECK_CUDA_CHECK(
      cudaMemcpyAsync(&host, counter_.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<int64_t>(host);
}

std::string DeviceProblem::check_outputs(cudaStream_t stream) {
  auto expect = [&](const char* name, const void* data, int64_t count, int64_t want) {
    const bool cache = data == key_cache_.get() || data == value_cache_.get();
    const int64_t got =
        count_nonfinite_elements(data, count, cache ? shape_.cache_dtype() : shape_.dtype, stream);
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
