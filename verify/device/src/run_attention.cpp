/// run_paged_attention: upload (query rows, caches, ragged batch, features, scales), NaN-poisoned
/// guarded output of batch.num_query_tokens() rows, launch, guard and gap checks, download into
/// a densely packed result.
#include <cstring>
#include <stdexcept>
#include <vector>

#include "device_buffer.h"
#include "device_launch.h"
#include "pagecheck/reference/dtype.h"
#include "pagecheck/verify/abi_args.h"

namespace pagecheck::verify {

namespace {

/// `elements` copies of the dtype's output poison (dtype table: output_poison_bits, a NaN),
/// the contents the output starts with: rows a variant declares untouched (context 0) and the
/// gaps between strided rows must still hold it after the launch.
std::vector<std::byte> output_poison(DType dtype, std::size_t elements) {
  const DTypeInfo& info = dtype_info(dtype);
  const uint32_t bits = info.output_poison_bits;  // little endian: the low bytes are the element
  std::vector<std::byte> buffer(elements * info.bytes);
  for (std::size_t i = 0; i < elements; ++i)
    std::memcpy(&buffer[i * info.bytes], &bits, info.bytes);
  return buffer;
}

/// Elements of `layout` that the output does not cover must keep the output poison.
std::string check_gaps(const ref::TokenLayout& layout, const std::vector<std::byte>& buffer,
                       const std::vector<std::byte>& poison, std::size_t elem) {
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
      if (buffer[i * elem + b] != poison[i * elem + b]) {
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
  const int64_t rows = p.batch.num_query_tokens();
  const ref::TokenLayout out_layout = options.attention_out_layout.value_or(
      ref::TokenLayout::packed(rows, p.num_heads, p.head_size()));
  out_layout.validate("attention_out_layout");
  if (out_layout.num_tokens != rows || out_layout.num_heads != p.num_heads ||
      out_layout.head_size != p.head_size()) {
    throw std::invalid_argument(
        "attention_out_layout does not match the problem's [num_query_tokens, num_heads, "
        "head_size]");
  }

  using detail::upload_new;
  using detail::upload_vector;
  const detail::DeviceBuffer query = upload_new(p.query.data(), p.query.size());
  // A combined cache is one allocation (key_cache); the converter points into it for V.
  const detail::DeviceBuffer key_cache = upload_new(p.key_cache.data(), p.key_cache.size());
  const detail::DeviceBuffer value_cache = upload_new(p.value_cache.data(), p.value_cache.size());
  const detail::DeviceBuffer block_table = upload_vector(p.batch.strided_block_table());
  const detail::DeviceBuffer context_lens = upload_vector(p.batch.context_lens);
  const detail::DeviceBuffer query_start = upload_vector(p.batch.query_start);
  const detail::DeviceBuffer alibi = upload_vector(p.features.alibi_slopes);
  const detail::DeviceBuffer sinks = upload_vector(p.features.sinks);
  const detail::DeviceBuffer k_scale = upload_vector(p.k_scale);
  const detail::DeviceBuffer v_scale = upload_vector(p.v_scale);
  const std::size_t out_bytes = static_cast<std::size_t>(out_layout.span()) * elem;
  detail::GuardedBuffer out(out_bytes, options.guard_bytes, options.guard_pattern);
  const std::vector<std::byte> poison =
      output_poison(p.dtype, static_cast<std::size_t>(out_layout.span()));
  out.upload(poison.data());

  AttentionPointers pointers;
  pointers.query = query.get();
  pointers.key_cache = key_cache.get();
  pointers.value_cache = p.cache.combined ? nullptr : value_cache.get();
  pointers.query_start = query_start.typed<int32_t>();
  pointers.context_lens = context_lens.typed<int32_t>();
  pointers.block_table = block_table.typed<int32_t>();
  pointers.alibi_slopes = alibi.typed<float>();
  pointers.sinks = sinks.typed<float>();
  pointers.k_scale = k_scale.typed<float>();
  pointers.v_scale = v_scale.typed<float>();
  pointers.out = out.data();
  const pc_paged_attention_args args = attention_args(p, out_layout, pointers);

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
  const std::string gaps = check_gaps(out_layout, strided, poison, elem);
  if (!gaps.empty()) report += (report.empty() ? "" : "; ") + gaps;
  run.outcome.guards_intact = report.empty();
  run.outcome.guard_report = report;

  const int64_t d = p.head_size();
  run.out.resize(static_cast<std::size_t>(rows * p.num_heads * d) * elem);
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      std::memcpy(run.out.data() + ((t * p.num_heads + h) * d) * elem,
                  strided.data() + out_layout.offset(t, h, 0) * elem, d * elem);
    }
  }
  return run;
}

}  // namespace pagecheck::verify
