/// CPU simulations of the planted bug classes of issues 15 and 16 (sim_planted_features.h).
#include "sim_planted_features.h"

#include <cmath>
#include <cstring>

#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/planted_features.h"
#include "pagecheck/verify/planted_row.h"

namespace pagecheck::verify::check {
namespace {

namespace planted = verify::planted;

static_assert(static_cast<int>(DType::kFloat8E5M2) == PC_DTYPE_FP8_E5M2 &&
                  static_cast<int>(DType::kBFloat16) == PC_DTYPE_BFLOAT16,
              "DType and pc_dtype share their values");
static_assert(static_cast<int>(ref::ScaleKind::kPerKvHead) == PC_SCALE_PER_KV_HEAD,
              "ScaleKind and pc_scale_kind share their values");

pc_dtype abi_dtype(DType d) {
  return static_cast<pc_dtype>(static_cast<int>(d));
}

pc_cache_strides abi_strides(const ref::CacheTensorStrides& s) {
  return pc_cache_strides{s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
}

template <typename T>
const T* data_or_null(const std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

/// The planted attention kernel on the host: attend_row for every (row, head), as the kernel's
/// threads run it, on the arguments the kernel would receive (the strided block table).
std::vector<double> run_rows(const ref::PagedAttentionProblem& p, planted::RowBug bug) {
  const ref::PagedCacheLayout& c = p.cache;
  const ref::RaggedBatch& b = p.batch;
  const std::vector<int32_t> table = b.strided_block_table();
  const std::byte* values = c.combined
                                ? p.key_cache.data() + c.value_base * int64_t(dtype_size(c.dtype))
                                : p.value_cache.data();
  planted::RowArgs a{};
  a.dtype = abi_dtype(p.dtype);
  a.kv_dtype = abi_dtype(c.dtype);
  a.scale_kind = static_cast<pc_scale_kind>(static_cast<int>(c.scale_kind));
  a.query = p.query.data();
  a.query_stride_token = p.query_layout.stride_token;
  a.query_stride_head = p.query_layout.stride_head;
  a.key_cache = p.key_cache.data();
  a.value_cache = values;
  planted::set_row_cache(a, abi_strides(c.key), abi_strides(c.value), c.num_blocks, c.num_kv_heads,
                         c.head_size, c.block_size);
  a.num_heads = p.num_heads;
  a.num_seqs = b.num_seqs;
  a.query_start = data_or_null(b.query_start);
  a.context_lens = b.context_lens.data();
  a.block_table = table.data();
  a.block_table_stride = b.table_stride();
  a.k_scale = data_or_null(p.k_scale);
  a.v_scale = data_or_null(p.v_scale);
  a.alibi_slopes = data_or_null(p.features.alibi_slopes);
  a.sinks = data_or_null(p.features.sinks);
  a.window = p.features.window;
  a.soft_cap = p.features.soft_cap;
  a.causal = p.features.causal ? 1 : 0;
  a.scale = p.scale;
  const int64_t rows = b.num_query_tokens(), hs = c.head_size;
  std::vector<float> logits(static_cast<std::size_t>(std::max<int64_t>(1, b.max_context_len())));
  std::vector<float> out(static_cast<std::size_t>(hs));
  std::vector<double> result(static_cast<std::size_t>(rows * p.num_heads * hs));
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t h = 0; h < p.num_heads; ++h) {
      planted::attend_row(a, bug, row, h, logits.data(), out.data());
      std::copy(out.begin(), out.end(), result.begin() + (row * p.num_heads + h) * hs);
    }
  }
  return result;
}

/// True when float32 `q` overflows the fp8 format without saturation: |q| beyond the midpoint
/// between the largest finite value and the next grid point, or on it when the largest code is
/// odd (the tie then rounds away), or infinite.
bool overflows(DType dtype, float q) {
  const double max = dtype_info(dtype).max_finite;
  const double next =
      max + std::ldexp(1.0, std::ilogb(max) - (dtype_info(dtype).mantissa_bits - 1));
  const double edge = (max + next) / 2, mag = std::fabs(static_cast<double>(q));
  const int max_code = quantize_fp8(dtype, max) & 0x7f;
  return std::isinf(q) || mag > edge || (mag == edge && (max_code & 1) != 0);
}

/// reshape_and_cache into an fp8 cache whose conversion does not saturate (CUDA's __NV_NOSAT):
/// an overflowing quotient becomes the NaN code 0x7f (e4m3, which has no infinity) or the
/// infinity 0x7c (e5m2), with its sign.
void reshape_no_saturation(ref::CacheCopyProblem& p) {
  ref::reshape_and_cache(p);
  const ref::PagedCacheLayout& c = p.cache;
  if (!dtype_info(c.dtype).fp8 || p.dtype == c.dtype) return;
  const int max_code = quantize_fp8(c.dtype, dtype_info(c.dtype).max_finite) & 0x7f;
  const uint8_t overflow =
      c.dtype == DType::kFloat8E4M3 ? 0x7f : static_cast<uint8_t>(max_code + 1);
  std::vector<std::byte>& values = c.combined ? p.key_cache : p.value_cache;
  const auto patch = [&](const std::vector<std::byte>& tokens, const ref::TokenLayout& layout,
                         const std::vector<float>& scales, std::vector<std::byte>& cache, bool key,
                         int64_t t, int64_t block, int64_t offset) {
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      const float scale = scales[c.scale_kind == ref::ScaleKind::kPerKvHead ? h : 0];
      for (int64_t d = 0; d < c.head_size; ++d) {
        const float v =
            static_cast<float>(load_element(p.dtype, tokens.data(), layout.offset(t, h, d)));
        const float q = v / scale;
        if (!overflows(c.dtype, q)) continue;
        const int64_t at = key ? c.key_at(block, h, offset, d) : c.value_at(block, h, offset, d);
        cache[static_cast<std::size_t>(at)] =
            static_cast<std::byte>(overflow | (std::signbit(q) ? 0x80 : 0));
      }
    }
  };
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size, offset = slot % c.block_size;
    patch(p.key, p.key_layout, p.k_scale, p.key_cache, true, t, block, offset);
    patch(p.value, p.value_layout, p.v_scale, values, false, t, block, offset);
  }
}

std::vector<ref::CacheKind> kinds_in(uint32_t mask) {
  std::vector<ref::CacheKind> out;
  for (ref::CacheKind k : {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND}) {
    if (mask & (1u << static_cast<int>(k))) out.push_back(k);
  }
  return out;
}

/// The caps of the simulation of `d`: the planted variant's declaration.
gen::VariantCaps caps_of(const planted::FeatureDecl& d, const std::string& name) {
  std::vector<int64_t> heads, blocks;
  if (d.wide_sizes) {
    heads.assign(std::begin(planted::kControlHeadSizes), std::end(planted::kControlHeadSizes));
    blocks.assign(std::begin(planted::kControlBlockSizes), std::end(planted::kControlBlockSizes));
  } else {
    heads.assign(std::begin(planted::kBugHeadSizes), std::end(planted::kBugHeadSizes));
    blocks.assign(std::begin(planted::kBugBlockSizes), std::end(planted::kBugBlockSizes));
  }
  gen::VariantCaps c =
      gen::make_caps(name, d.family, heads, blocks, planted::kFeatureLayoutCaps | d.caps);
  for (const DTypeInfo& row : all_dtypes()) {
    if (d.kv_dtype_mask & (1u << static_cast<int>(row.dtype))) c.kv_dtypes.push_back(row.dtype);
  }
  c.cache_kinds = kinds_in(d.cache_kind_mask);
  for (ref::ScaleKind k : {ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead}) {
    if (d.scale_kind_mask & (1u << static_cast<int>(k))) c.scale_kinds.push_back(k);
  }
  c.max_query_len = d.max_query_len;
  c.context0 = d.context0;
  return c;
}

/// "planted_x" -> "sim_x".
std::string sim_name(const char* planted_name) {
  return "sim_" + std::string(planted_name).substr(std::strlen("planted_"));
}

/// The generic copy controls are not simulated: sim_gather_reference and sim_reshape_reference
/// declare every layout and fp8 already.
bool simulated(const planted::FeatureDecl& d) {
  return d.family == PC_FAMILY_PAGED_ATTENTION || d.copy_bug != planted::CopyBug::kNone;
}

}  // namespace

std::vector<FeatureSim> planted_feature_sims() {
  std::vector<FeatureSim> sims;
  for (const planted::FeatureDecl& d : planted::kFeatureDecls) {
    if (!simulated(d)) continue;
    FeatureSim s;
    s.caps = caps_of(d, sim_name(d.name));
    s.control = d.row_bug == planted::RowBug::kNone && d.copy_bug == planted::CopyBug::kNone;
    if (d.family == PC_FAMILY_PAGED_ATTENTION) {
      const planted::RowBug bug = d.row_bug;
      s.attention = [bug](const ref::PagedAttentionProblem& p) { return run_rows(p, bug); };
    } else {
      s.copy = reshape_no_saturation;
    }
    sims.push_back(std::move(s));
  }
  return sims;
}

std::vector<std::string> planted_feature_sim_names(bool control) {
  std::vector<std::string> names;
  for (const FeatureSim& s : planted_feature_sims()) {
    if (s.control == control) names.push_back(s.caps.name);
  }
  return names;
}

}  // namespace pagecheck::verify::check
