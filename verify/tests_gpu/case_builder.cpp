/// The GPU tests' fixed cases as gen specs.
#include "case_builder.h"

#include <algorithm>

namespace pagecheck::gpu_test {
namespace {

/// Cache padding of the padded cases: K and V padded differently (PC_CAP_CACHE_PAD), in whole
/// 16-byte vectors so vector loads stay aligned.
ref::CachePadding uneven_padding(DType dtype) {
  const int64_t x = dtype_x(dtype);
  return ref::CachePadding{{3 * x, 2 * x, x}, {2 * x, x, x}};
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const AttentionCase& c) {
  return os << c.name << " {" << gen::summary(c.spec) << "}";
}

std::ostream& operator<<(std::ostream& os, const CopyCase& c) {
  return os << c.name << " {" << gen::summary(c.spec) << "}";
}

Attention::Attention(std::string name, DType dtype, int64_t head, int64_t block, int64_t heads,
                     int64_t kv_heads, std::vector<int32_t> context_lens, uint64_t seed)
    : name_(std::move(name)),
      spec_(verify::golden::plain_attention_spec(dtype, head, block, heads, kv_heads, seed)) {
  placement_.context_lens = std::move(context_lens);
  placement_.spare_blocks = 3;
  placement_.seed = seed;
}

Attention& Attention::alibi() {
  spec_.alibi = true;
  return *this;
}
Attention& Attention::padded_cache() {
  spec_.cache.pad = uneven_padding(spec_.dtype);
  return *this;
}
Attention& Attention::strided_query() {
  // A slice of a fused QKV tensor: stride_token = 3 * heads * stride_head.
  const int64_t head_stride = spec_.head_size + dtype_x(spec_.dtype);
  spec_.query_pad = gen::TokenPadding{2 * spec_.num_heads * head_stride, dtype_x(spec_.dtype)};
  return *this;
}
Attention& Attention::strided_out() {
  const int64_t pad = dtype_x(spec_.dtype) / 2 + 1;
  spec_.out_pad = gen::TokenPadding{2 * pad, pad};
  return *this;
}
Attention& Attention::peaked() {
  spec_.regime = gen::Regime::kPeaked;
  return *this;
}
Attention& Attention::shared_prefix() {
  placement_.shared_prefix_blocks = 1;
  return *this;
}
Attention& Attention::high_blocks(int64_t blocks) {
  placement_.min_blocks = blocks;
  placement_.high_blocks = true;
  return *this;
}

Attention::operator AttentionCase() const {
  AttentionCase c{name_, spec_};
  verify::golden::place_sequences(placement_, c.spec);
  return c;
}

Copy::Copy(std::string name, DType dtype, int64_t head, int64_t block, int64_t kv_heads,
           int64_t tokens, int64_t blocks, int skip_every, uint64_t seed)
    : name_(std::move(name)),
      spec_(verify::golden::plain_copy_spec(PC_FAMILY_GATHER_CACHED_KV, dtype, head, block,
                                            kv_heads, blocks, seed)),
      tokens_(tokens),
      skip_every_(skip_every) {}

Copy& Copy::padded_cache() {
  spec_.cache.pad = uneven_padding(spec_.dtype);
  return *this;
}
Copy& Copy::strided_tokens() {
  const int64_t x = dtype_x(spec_.dtype);
  spec_.key_pad = gen::TokenPadding{2 * x, x};
  spec_.value_pad = gen::TokenPadding{3 * x, x};  // differs from the key rows
  return *this;
}
Copy& Copy::high_slots() {
  high_slots_ = true;
  return *this;
}
Copy& Copy::bits() {
  spec_.regime = gen::Regime::kBits;
  return *this;
}

Copy::operator CopyCase() const {
  CopyCase c{name_, spec_};
  const int64_t slots = spec_.num_blocks * spec_.block_size;
  const int64_t window = std::min<int64_t>(slots, std::max<int64_t>(4 * tokens_, 64));
  c.spec.slot_mapping = verify::golden::distinct_slots(high_slots_ ? slots - window : 0, window,
                                                       tokens_, spec_.content_seed);
  for (int64_t t = 0; t < tokens_; ++t) {
    if (skip_every_ > 0 && t % skip_every_ == skip_every_ - 1) c.spec.slot_mapping[t] = -1;
  }
  return c;
}

gen::CopySpec for_family(const CopyCase& c, pc_family family) {
  gen::CopySpec spec = c.spec;
  spec.family = family;
  return spec;
}

std::optional<ref::TokenLayout> device_out_layout(const gen::AttentionSpec& spec) {
  if (!spec.out_pad.any()) return std::nullopt;
  return gen::out_layout(spec);
}

}  // namespace pagecheck::gpu_test
