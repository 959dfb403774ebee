/// Built-in benchmark sweeps and shape selection.
#include "pagecheck/bench/shapes.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace pagecheck::bench {

namespace {
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

void require_positive(const BenchShape& s, const char* field, int64_t value) {
  if (value <= 0) {
    throw std::invalid_argument("shape '" + s.label + "': " + field + " must be positive, got " +
                                std::to_string(value));
  }
}
}  // namespace

int64_t BenchShape::blocks_needed() const {
  if (family == PC_FAMILY_PAGED_ATTENTION) return num_seqs * ceil_div(context_len, block_size);
  return ceil_div(num_tokens, block_size);
}

void BenchShape::validate() const {
  if (family == PC_FAMILY_PAGED_ATTENTION) {
    require_positive(*this, "num_seqs", num_seqs);
    require_positive(*this, "context_len", context_len);
    require_positive(*this, "query_len", query_len);
    if (window < 0 || query_len > context_len) {
      throw std::invalid_argument("shape '" + label +
                                  "': window must be >= 0 and query_len <= " + "context_len");
    }
  } else {
    require_positive(*this, "num_tokens", num_tokens);
    if (window != 0 || query_len != 1) {
      throw std::invalid_argument("shape '" + label +
                                  "': window and query_len are attention "
                                  "fields");
    }
  }
  if (kv_dtype && *kv_dtype != dtype && !dtype_info(*kv_dtype).fp8) {
    throw std::invalid_argument("shape '" + label + "': kv_dtype " + dtype_name(*kv_dtype) +
                                " is neither dtype nor fp8");
  }
  require_positive(*this, "num_heads", num_heads);
  require_positive(*this, "num_kv_heads", num_kv_heads);
  require_positive(*this, "head_size", head_size);
  require_positive(*this, "block_size", block_size);
  require_positive(*this, "num_blocks", num_blocks);
  if (num_heads % num_kv_heads != 0) {
    throw std::invalid_argument("shape '" + label + "': num_heads " + std::to_string(num_heads) +
                                " is not a multiple of num_kv_heads " +
                                std::to_string(num_kv_heads));
  }
  if (num_blocks < blocks_needed()) {
    throw std::invalid_argument("shape '" + label + "': pool of " + std::to_string(num_blocks) +
                                " blocks is smaller than the " + std::to_string(blocks_needed()) +
                                " blocks the tokens need");
  }
}

BenchShape copy_shape(pc_family family, int64_t num_tokens, int64_t num_kv_heads, int64_t head_size,
                      int64_t block_size, DType dtype) {
  BenchShape s;
  s.family = family;
  s.label = "t" + std::to_string(num_tokens);
  s.group = "tokens";
  s.dtype = dtype;
  s.num_tokens = num_tokens;
  s.num_heads = num_kv_heads;
  s.num_kv_heads = num_kv_heads;
  s.head_size = head_size;
  s.block_size = block_size;
  s.num_blocks = std::max(kCopyMinBlocks, s.blocks_needed());
  s.validate();
  return s;
}

BenchShape attention_shape(int64_t num_seqs, int64_t context_len, int64_t num_heads,
                           int64_t num_kv_heads, int64_t head_size, int64_t block_size,
                           DType dtype) {
  BenchShape s;
  s.family = PC_FAMILY_PAGED_ATTENTION;
  s.group = num_heads == num_kv_heads ? "mha" : "gqa";
  s.label = s.group + "_b" + std::to_string(num_seqs) + "_c" + std::to_string(context_len);
  s.dtype = dtype;
  s.num_seqs = num_seqs;
  s.context_len = context_len;
  s.num_heads = num_heads;
  s.num_kv_heads = num_kv_heads;
  s.head_size = head_size;
  s.block_size = block_size;
  s.num_blocks = std::max(kAttentionMinBlocks, s.blocks_needed());
  s.validate();
  return s;
}

std::string shape_suffix(const BenchShape& s) {
  std::string out;
  if (s.cache_kind != ref::CacheKind::kXSplit)
    out += std::string("_") + cache_kind_name(s.cache_kind);
  if (s.cache_dtype() != s.dtype) out += std::string("_") + dtype_info(s.cache_dtype()).short_name;
  if (s.window > 0) out += "_w" + std::to_string(s.window);
  if (s.query_len > 1) out += "_q" + std::to_string(s.query_len);
  return out;
}

BenchShape with_variation(BenchShape s, ref::CacheKind kind, std::optional<DType> kv_dtype,
                          int64_t window, int64_t query_len) {
  s.cache_kind = kind;
  s.kv_dtype = kv_dtype && *kv_dtype != s.dtype ? kv_dtype : std::nullopt;
  s.window = window;
  s.query_len = query_len;
  const std::string suffix = shape_suffix(s);
  s.label += suffix;
  s.group += suffix;
  s.validate();
  return s;
}

namespace {

/// The layout and fp8 rows of the default sweep (see builtin_sweep).
void add_variation_rows(pc_family family, DType dtype, std::vector<BenchShape>& out) {
  using ref::CacheKind;
  const std::optional<DType> same, e4m3 = DType::kFloat8E4M3;
  if (family != PC_FAMILY_PAGED_ATTENTION) {
    for (const auto& [kind, kv] : {std::pair{CacheKind::kNHD, same},
                                   {CacheKind::kHND, same},
                                   {CacheKind::kXSplit, e4m3},
                                   {CacheKind::kNHD, e4m3}}) {
      for (int64_t t : {64, 4096, 65536}) {
        out.push_back(with_variation(copy_shape(family, t, 40, 128, 8, dtype), kind, kv));
      }
    }
    return;
  }
  for (const auto& [kind, kv] :
       {std::pair{CacheKind::kNHD, same}, {CacheKind::kXSplit, e4m3}, {CacheKind::kNHD, e4m3}}) {
    for (int64_t b : {1, 32, 128}) {
      out.push_back(with_variation(attention_shape(b, 4096, 64, 8, 128, 16, dtype), kind, kv));
    }
  }
  for (int64_t w : {128, 1024}) {
    for (int64_t b : {8, 32}) {
      out.push_back(with_variation(attention_shape(b, 16384, 64, 8, 128, 16, dtype),
                                   CacheKind::kXSplit, same, w));
    }
  }
  for (int64_t b : {8, 32}) {
    out.push_back(with_variation(attention_shape(b, 4096, 64, 8, 128, 16, dtype),
                                 CacheKind::kXSplit, same, 0, 4));
  }
}

}  // namespace

std::vector<BenchShape> builtin_sweep(pc_family family, bool quick, DType dtype) {
  std::vector<BenchShape> out;
  if (family == PC_FAMILY_PAGED_ATTENTION) {
    if (quick) {
      out.push_back(attention_shape(1, 128, 40, 40, 128, 16, dtype));
      out.push_back(attention_shape(8, 512, 40, 40, 128, 16, dtype));
      out.push_back(attention_shape(2, 300, 64, 8, 128, 16, dtype));
      return out;
    }
    const int64_t batches[] = {1, 8, 32, 128, 256};
    const int64_t contexts[] = {128, 512, 1024, 2048, 4096};
    for (const auto& [heads, kv_heads] : {std::pair<int64_t, int64_t>{40, 40}, {64, 8}}) {
      for (int64_t b : batches) {
        for (int64_t c : contexts)
          out.push_back(attention_shape(b, c, heads, kv_heads, 128, 16, dtype));
      }
    }
    add_variation_rows(family, dtype, out);
    return out;
  }
  if (quick) {
    out.push_back(copy_shape(family, 64, 40, 128, 8, dtype));
    out.push_back(copy_shape(family, 1000, 40, 128, 8, dtype));
    out.push_back(with_variation(copy_shape(family, 1000, 40, 128, 8, dtype), ref::CacheKind::kNHD,
                                 DType::kFloat8E4M3));
    return out;
  }
  for (int64_t t = 64; t <= 65536; t *= 2) out.push_back(copy_shape(family, t, 40, 128, 8, dtype));
  add_variation_rows(family, dtype, out);
  return out;
}

std::vector<BenchShape> select_shapes(const std::vector<BenchShape>& sweep,
                                      const std::string& labels) {
  std::vector<BenchShape> out;
  std::stringstream in(labels);
  std::string label;
  while (std::getline(in, label, ',')) {
    if (label.empty()) continue;
    auto it = std::find_if(sweep.begin(), sweep.end(),
                           [&](const BenchShape& s) { return s.label == label; });
    if (it == sweep.end()) {
      std::string known;
      for (const auto& s : sweep) known += (known.empty() ? "" : ", ") + s.label;
      throw std::invalid_argument("--shapes: unknown shape '" + label + "' (known: " + known + ")");
    }
    out.push_back(*it);
  }
  if (out.empty()) throw std::invalid_argument("--shapes: no shape named in '" + labels + "'");
  return out;
}

std::vector<BenchShape> sweep_for(pc_family family, bool quick, const std::string& labels,
                                  DType dtype, std::string* sweep_name) {
  std::vector<BenchShape> all = builtin_sweep(family, false, dtype);
  std::vector<BenchShape> small = builtin_sweep(family, true, dtype);
  std::string name = quick ? "quick" : "default";
  std::vector<BenchShape> out = quick ? small : all;
  if (!labels.empty()) {
    for (const auto& q : small) {
      const bool dup = std::any_of(all.begin(), all.end(),
                                   [&](const BenchShape& a) { return a.label == q.label; });
      if (!dup) all.push_back(q);
    }
    name = "custom";
    out = select_shapes(all, labels);
  }
  if (sweep_name != nullptr) *sweep_name = name;
  return out;
}

std::string describe(const BenchShape& s) {
  std::ostringstream os;
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    os << "batch " << s.num_seqs << ", context " << s.context_len << ", " << s.num_heads << "/"
       << s.num_kv_heads << " heads";
  } else {
    os << s.num_tokens << " tokens, " << s.num_kv_heads << " heads";
  }
  os << ", head " << s.head_size << ", block " << s.block_size << ", " << s.num_blocks
     << " blocks, " << dtype_name(s.dtype);
  if (s.cache_kind != ref::CacheKind::kXSplit) os << ", " << cache_kind_name(s.cache_kind);
  if (s.cache_dtype() != s.dtype) os << ", " << dtype_name(s.cache_dtype()) << " cache";
  if (s.window > 0) os << ", window " << s.window;
  if (s.query_len > 1) os << ", " << s.query_len << " query tokens per sequence";
  return os.str();
}

}  // namespace pagecheck::bench
