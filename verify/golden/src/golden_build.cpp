/// Builds a case's golden in memory: the materialized spec, the reference outputs, attributes.
#include "golden_schema.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/golden_tools.h"
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

/// The case's identity: schema, name, description, seed, versions and the spec.
void add_identity(const GoldenCase& c, AttrMap& a) {
  a["schema_version"] = kSchemaVersion;
  a["case_name"] = c.name;
  a["description"] = c.description;
  a["seed"] = std::visit([](const auto& s) { return s.content_seed; }, c.spec);
  a["reference_version"] = std::string(kReferenceVersion);
  a["generator_version"] = kGeneratorVersion;
  a["spec"] = gen::spec_to_json(c.spec).dump();
}

void add_attention(const gen::AttentionSpec& spec, GoldenFile& file) {
  const ref::PagedAttentionProblem p = gen::materialize(spec);
  const ref::PagedAttentionResult r = ref::paged_attention(p);
  write_attention_problem(p, file);
  const int64_t rows = p.batch.num_query_tokens(), heads = p.num_heads;
  const auto packed = ref::TokenLayout::packed(rows, heads, p.head_size());
  add_dataset(file, token_tensor_spec("expected/out", p.dtype, packed), r.out_storage(p.dtype));
  add_dataset(file,
              array_spec("expected/out_f64", ElementType::kFloat64, {rows, heads, p.head_size()}),
              as_bytes(r.out));
  add_dataset(file, array_spec("expected/lse", ElementType::kFloat64, {rows, heads}),
              as_bytes(r.lse));
}

void add_copy(const gen::CopySpec& spec, GoldenFile& file) {
  const ref::CacheCopyProblem p = gen::materialize(spec);
  write_copy_problem(spec.family, p, file);
  ref::CacheCopyProblem after = p;
  if (spec.family == PC_FAMILY_GATHER_CACHED_KV) {
    ref::gather_cached_kv(after);
    add_dataset(file, token_tensor_spec("expected/key", p.dtype, p.key_layout), after.key);
    add_dataset(file, token_tensor_spec("expected/value", p.dtype, p.value_layout), after.value);
    return;
  }
  ref::reshape_and_cache(after);
  const std::vector<DatasetSpec> caches = cache_tensor_specs("expected", p.cache);
  add_dataset(file, caches[0], after.key_cache);
  if (caches.size() > 1) add_dataset(file, caches[1], after.value_cache);
}

}  // namespace

GoldenFile build_golden(const GoldenCase& c) {
  GoldenFile file;
  add_identity(c, file.attrs);
  if (const auto* attention = std::get_if<gen::AttentionSpec>(&c.spec)) {
    add_attention(*attention, file);
  } else {
    add_copy(std::get<gen::CopySpec>(c.spec), file);
  }
  return file;
}

}  // namespace pagecheck::verify::golden
