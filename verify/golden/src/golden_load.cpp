/// Strict loading of a golden file into reference problems and expected outputs.
#include <nlohmann/json.hpp>

#include "golden_schema.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/golden.h"
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

void read_attention(GoldenReader& r, LoadedGolden& g) {
  g.attention = read_attention_problem(r);
  const ref::PagedAttentionProblem& p = g.attention;
  const int64_t rows = p.batch.num_query_tokens(), heads = p.num_heads;
  const auto packed = ref::TokenLayout::packed(rows, heads, p.head_size());
  g.dtype = p.dtype;
  g.expected_out = r.bytes(token_tensor_spec("expected/out", p.dtype, packed));
  g.expected_out_f64 = r.values<double>(
      array_spec("expected/out_f64", ElementType::kFloat64, {rows, heads, p.head_size()}));
  g.expected_lse =
      r.values<double>(array_spec("expected/lse", ElementType::kFloat64, {rows, heads}));
}

void read_copy(GoldenReader& r, LoadedGolden& g) {
  g.copy = read_copy_problem(r);
  const ref::CacheCopyProblem& p = g.copy;
  g.dtype = p.dtype;
  if (g.family == PC_FAMILY_GATHER_CACHED_KV) {
    g.expected_first = r.bytes(token_tensor_spec("expected/key", p.dtype, p.key_layout));
    g.expected_second = r.bytes(token_tensor_spec("expected/value", p.dtype, p.value_layout));
    return;
  }
  const std::vector<DatasetSpec> caches = cache_tensor_specs("expected", p.cache);
  g.expected_first = r.bytes(caches[0]);
  if (caches.size() > 1) g.expected_second = r.bytes(caches[1]);
}

}  // namespace

LoadedGolden parse_golden(GoldenFile raw, const std::string& path) {
  LoadedGolden g;
  g.raw = std::move(raw);
  g.path = path;
  GoldenReader r(g.raw, path);
  const std::string version_problem = schema_version_problem(r.integer("schema_version"));
  if (!version_problem.empty()) {
    throw GoldenError(path, "attribute schema_version", version_problem);
  }
  g.name = r.text("case_name");
  g.description = r.text("description");
  g.seed = r.unsigned_integer("seed");
  g.reference_version = r.text("reference_version");
  g.family = r.parsed("family", [](const std::string& t) { return parse_family(t); });
  g.spec = r.parsed(
      "spec", [](const std::string& t) { return gen::spec_from_json(nlohmann::json::parse(t)); });
  if (gen::family_of(g.spec) != g.family) {
    throw GoldenError(path, "attribute spec",
                      std::string("describes a ") + family_name(gen::family_of(g.spec)) +
                          " case, the file is " + family_name(g.family));
  }
  if (g.family == PC_FAMILY_PAGED_ATTENTION) {
    read_attention(r, g);
  } else {
    read_copy(r, g);
  }
  r.refuse_unread("schema version " + std::to_string(kSchemaVersion) + " for " +
                  family_name(g.family));
  return g;
}

LoadedGolden load_golden(const std::string& path) {
  return parse_golden(read_golden_file(path), path);
}

}  // namespace pagecheck::verify::golden
