/// HDF5 form of a whole KV-cache copy problem: its own attributes, the contiguous key / value
/// tensors, the slot mapping and the cache concept.
#include <stdexcept>
#include <utility>

#include "pagecheck/registry.h"
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

DatasetSpec slot_mapping_spec(int64_t num_tokens) {
  return array_spec("inputs/slot_mapping", ElementType::kInt64, {num_tokens});
}

}  // namespace

void write_copy_problem(pc_family family, const ref::CacheCopyProblem& p, GoldenFile& file) {
  AttrMap& a = file.attrs;
  a["family"] = std::string(family_name(family));
  a["dtype"] = std::string(dtype_name(p.dtype));
  a["num_tokens"] = p.num_tokens();
  a["dequantize"] = int64_t{p.dequantize ? 1 : 0};
  write_token_strides("key", p.key_layout, a);
  write_token_strides("value", p.value_layout, a);
  write_cache({p.cache, p.k_scale, p.v_scale}, file);
  const std::vector<DatasetSpec> caches = cache_tensor_specs("inputs", p.cache);
  add_dataset(file, caches[0], p.key_cache);
  if (caches.size() > 1) add_dataset(file, caches[1], p.value_cache);
  add_dataset(file, slot_mapping_spec(p.num_tokens()), as_bytes(p.slot_mapping));
  add_dataset(file, token_tensor_spec("inputs/key", p.dtype, p.key_layout), p.key);
  add_dataset(file, token_tensor_spec("inputs/value", p.dtype, p.value_layout), p.value);
}

ref::CacheCopyProblem read_copy_problem(GoldenReader& r) {
  ref::CacheCopyProblem p;
  p.dtype = r.parsed("dtype", [](const std::string& t) { return parse_dtype(t); });
  const int64_t n = r.integer("num_tokens");
  p.dequantize = r.flag("dequantize");
  CacheForm cache = read_cache(r);
  p.cache = cache.layout;
  p.k_scale = std::move(cache.k_scale);
  p.v_scale = std::move(cache.v_scale);
  const int64_t heads = p.cache.num_kv_heads, head_size = p.cache.head_size;
  p.key_layout = read_token_strides(r, "key", n, heads, head_size);
  p.value_layout = read_token_strides(r, "value", n, heads, head_size);
  const std::vector<DatasetSpec> caches = cache_tensor_specs("inputs", p.cache);
  p.key_cache = r.bytes(caches[0]);
  if (caches.size() > 1) p.value_cache = r.bytes(caches[1]);
  p.slot_mapping = r.values<int64_t>(slot_mapping_spec(n));
  p.key = r.bytes(token_tensor_spec("inputs/key", p.dtype, p.key_layout));
  p.value = r.bytes(token_tensor_spec("inputs/value", p.dtype, p.value_layout));
  return validated(std::move(p), r);
}

}  // namespace pagecheck::verify::golden
