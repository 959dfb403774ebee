/// HDF5 form of a whole paged-attention problem: its own attributes and the query, then the
/// cache, batch and feature concepts.
#include <stdexcept>
#include <utility>

#include "pagecheck/registry.h"
#include "problem_attrs.h"

namespace pagecheck::verify::golden {

void write_attention_problem(const ref::PagedAttentionProblem& p, GoldenFile& file) {
  AttrMap& a = file.attrs;
  a["family"] = std::string(family_name(PC_FAMILY_PAGED_ATTENTION));
  a["dtype"] = std::string(dtype_name(p.dtype));
  a["num_heads"] = p.num_heads;
  a["scale"] = p.scale;
  write_token_strides("query", p.query_layout, a);
  add_dataset(file, token_tensor_spec("inputs/query", p.dtype, p.query_layout), p.query);
  write_cache({p.cache, p.k_scale, p.v_scale}, file);
  const std::vector<DatasetSpec> caches = cache_tensor_specs("inputs", p.cache);
  add_dataset(file, caches[0], p.key_cache);
  if (caches.size() > 1) add_dataset(file, caches[1], p.value_cache);
  write_batch(p.batch, file);
  write_features(p.features, p.num_heads, file);
}

ref::PagedAttentionProblem read_attention_problem(GoldenReader& r) {
  ref::PagedAttentionProblem p;
  p.dtype = r.parsed("dtype", [](const std::string& t) { return parse_dtype(t); });
  p.num_heads = r.integer("num_heads");
  p.scale = r.real("scale");
  CacheForm cache = read_cache(r);
  p.cache = cache.layout;
  p.k_scale = std::move(cache.k_scale);
  p.v_scale = std::move(cache.v_scale);
  p.batch = read_batch(r);
  p.features = read_features(r, p.num_heads);
  p.query_layout =
      read_token_strides(r, "query", p.batch.num_query_tokens(), p.num_heads, p.cache.head_size);
  p.query = r.bytes(token_tensor_spec("inputs/query", p.dtype, p.query_layout));
  const std::vector<DatasetSpec> caches = cache_tensor_specs("inputs", p.cache);
  p.key_cache = r.bytes(caches[0]);
  if (caches.size() > 1) p.value_cache = r.bytes(caches[1]);
  return validated(std::move(p), r);
}

}  // namespace pagecheck::verify::golden
