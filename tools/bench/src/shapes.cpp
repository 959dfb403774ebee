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
  } else {
    require_positive(*this, "num_tokens", num_tokens);
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
    return out;
  }
  if (quick) {
    out.push_back(copy_shape(family, 64, 40, 128, 8, dtype));
    out.push_back(copy_shape(family, 1000, 40, 128, 8, dtype));
    return out;
  }
  for (int64_t t = 64; t <= 65536; t *= 2) out.push_back(copy_shape(family, t, 40, 128, 8, dtype));
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
  return os.str();
}

}  // namespace pagecheck::bench
