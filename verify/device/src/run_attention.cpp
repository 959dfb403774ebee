/// run_paged_attention: upload, NaN-poisoned guarded output, launch, guard and gap checks,
/// download into a densely packed result.
#include <cstring>
#include <stdexcept>
#include <vector>

#include "device_buffer.h"
#include "device_launch.h"
#include "pagecheck/reference/dtype.h"

namespace pagecheck::verify {

namespace {

/// Bytes of `layout` that the output does not cover must keep the 0xFF poison.
std::string check_gaps(const ref::TokenLayout& layout, const std::vector<std::byte>& buffer,
                       std::size_t elem) {
  const int64_t span = layout.span();
  std::vector<bool> covered(static_cast<std::size_t>(span), false);
  for (int64_t t = 0; t < layout.num_tokens; ++t) {
    for (int64_t h = 0; h < layout.num_heads; ++h) {
      const int64_t base = layout.offset(t, h, 0);
      for (int64_t d = 0; d < layout.head_size; ++d) covered[base + d] = true;
    }
  }
  int64_t changed = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < span; ++i) {
    if (covered[i]) continue;
    for (std::size_t b = 0; b < elem; ++b) {
      if (buffer[i * elem + b] != std::byte{0xFF}) {
        if (first < 0) first = i;
        ++changed;
        break;
      }
    }
  }
  if (changed == 0) return {};
  return "out: " + std::to_string(changed) +
         " elements between the strided rows changed, first at element " + std::to_string(first);
}

}  // namespace

AttentionRun run_paged_attention(const VariantInfo& variant, const ref::PagedAttentionProblem& p,
                                 const DeviceRunOptions& options) {
  detail::require_device();
  detail::require_family(variant, PC_FAMILY_PAGED_ATTENTION);
  p.validate();
  const std::size_t elem = dtype_size(p.dtype);
  const ref::TokenLayout out_layout = options.attention_out_layout.value_or(
      ref::TokenLayout::packed(p.num_seqs, p.num_heads, p.head_size()));
  out_layout.validate("attention_out_layout");
  if (out_layout.num_tokens != p.num_seqs || out_layout.num_heads != p.num_heads ||
      out_layout.head_size != p.head_size()) {
    throw std::invalid_argument(
        "attention_out_layout does not match the problem's [num_seqs, "
        "num_heads, head_size]");
  }

  using detail::upload_new;
  const detail::DeviceBuffer query = upload_new(p.query.data(), p.query.size());
  const detail::DeviceBuffer key_cache = upload_new(p.key_cache.data(), p.key_cache.size());
  const detail::DeviceBuffer value_cache = upload_new(p.value_cache.data(), p.value_cache.size());
  const std::vector<int32_t> table = p.strided_block_table();  // padded rows, poisoned padding
  const detail::DeviceBuffer block_table = upload_new(table.data(), table.size() * sizeof(int32_t));
  const detail::DeviceBuffer context_lens =
      upload_new(p.context_lens.data(), p.context_lens.size() * sizeof(int32_t));
  detail::DeviceBuffer alibi;
  if (!p.alibi_slopes.empty()) {
    alibi = upload_new(p.alibi_slopes.data(), p.alibi_slopes.size() * sizeof(float));
  }
  const std::size_t out_bytes = static_cast<std::size_t>(out_layout.span()) * elem;
  detail::GuardedBuffer out(out_bytes, options.guard_bytes, options.guard_pattern);
  out.fill(0xFF);  // NaN in float32, float16 and bfloat16

  pc_paged_attention_args args{};
  args.dtype = static_cast<pc_dtype>(p.dtype);
  args.num_seqs = p.num_seqs;
  args.num_heads = p.num_heads;
  args.max_blocks_per_seq = p.max_blocks_per_seq;
  args.max_context_len = p.host_max_context_len();
  args.scale = p.scale;
  args.query = query.get();
  args.query_stride_seq = p.query_layout.stride_token;
  args.query_stride_head = p.query_layout.stride_head;
  args.key_cache = key_cache.get();
  args.value_cache = value_cache.get();
  const ref::PagedCacheLayout& c = p.cache;
  args.cache = pc_cache_layout{c.num_blocks,
                               c.num_kv_heads,
                               c.head_size,
                               c.block_size,
                               c.x,
                               c.key_stride_block,
                               c.key_stride_head,
                               c.key_stride_group,
                               c.key_stride_slot,
                               c.value_stride_block,
                               c.value_stride_head,
                               c.value_stride_dim};
  args.block_table = static_cast<const int32_t*>(block_table.get());
  args.block_table_stride = p.table_stride();
  args.context_lens = static_cast<const int32_t*>(context_lens.get());
  args.alibi_slopes = p.alibi_slopes.empty() ? nullptr : static_cast<const float*>(alibi.get());
  args.out = out.data();
  args.out_stride_seq = out_layout.stride_token;
  args.out_stride_head = out_layout.stride_head;

  AttentionRun run;
  run.outcome = detail::launch_variant(variant, &args);
  if (!detail::context_usable(run.outcome) ||
      run.outcome.disposition == LaunchDisposition::kNotSupported ||
      run.outcome.disposition == LaunchDisposition::kInvalid) {
    return run;
  }
  std::string report = out.check_guards("out");
  std::vector<std::byte> strided(out_bytes);
  out.download(strided.data());
  const std::string gaps = check_gaps(out_layout, strided, elem);
  if (!gaps.empty()) report += (report.empty() ? "" : "; ") + gaps;
  run.outcome.guards_intact = report.empty();
  run.outcome.guard_report = report;

  const int64_t d = p.head_size();
  run.out.resize(static_cast<std::size_t>(p.num_seqs * p.num_heads * d) * elem);
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::memcpy(run.out.data() + ((s * p.num_heads + h) * d) * elem,
                  strided.data() + out_layout.offset(s, h, 0) * elem, d * elem);
    }
  }
  return run;
}

}  // namespace pagecheck::verify
