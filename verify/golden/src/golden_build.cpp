/// Builds a case's golden in memory: generated inputs, reference outputs, attributes.
#include <cstring>

#include "golden_schema.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {
namespace {

template <typename T>
std::vector<std::byte> as_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// Appends one dataset per spec, taking the bytes from `data` in spec order.
void add_datasets(const CaseShape& shape, std::vector<std::vector<std::byte>> data,
                  GoldenFile* file) {
  const std::vector<DatasetSpec> specs = dataset_specs(shape);
  if (specs.size() != data.size()) throw std::logic_error("build_golden: dataset count");
  for (std::size_t k = 0; k < specs.size(); ++k) {
    file->datasets.push_back(make_dataset(specs[k], std::move(data[k])));
  }
}

/// Adds the case's identity and generator parameters to the shape attributes.
void add_case_attributes(const CaseDefinition& def, std::map<std::string, AttrValue>* attrs) {
  std::map<std::string, AttrValue>& a = *attrs;
  a["schema_version"] = kSchemaVersion;
  a["case_name"] = def.name;
  a["description"] = def.description;
  a["seed"] = def.seed;
  a["reference_version"] = std::string(kReferenceVersion);
  a["generator_version"] = kGeneratorVersion;
  a["padding"] = def.padding;
  a["spare_blocks"] = def.spare_blocks;
  if (def.family == PC_FAMILY_PAGED_ATTENTION) {
    a["query_amplitude"] = def.query_amplitude;
    a["shared_prefix_blocks"] = def.shared_prefix_blocks;
    a["extra_table_columns"] = def.extra_table_columns;
  } else {
    a["num_skipped"] = def.num_skipped;
    a["preexisting_tokens"] = def.preexisting_tokens;
  }
}

}  // namespace

GoldenFile build_golden(const CaseDefinition& def) {
  GoldenFile file;
  CaseShape shape;
  shape.family = def.family;
  shape.dtype = def.dtype;
  if (def.family == PC_FAMILY_PAGED_ATTENTION) {
    ref::PagedAttentionProblem p = generate_attention_problem(def);
    const ref::PagedAttentionResult r = ref::paged_attention(p);
    shape.cache = p.cache;
    shape.tokens = p.query_layout;
    shape.num_seqs = p.num_seqs;
    shape.num_heads = p.num_heads;
    shape.max_blocks_per_seq = p.max_blocks_per_seq;
    shape.alibi = !p.alibi_slopes.empty();
    put_shape_attrs(shape, &file.attrs);
    file.attrs["scale"] = p.scale;
    file.attrs["max_context_len"] = p.max_context_len();
    std::vector<std::vector<std::byte>> data;
    data.push_back(std::move(p.query));
    data.push_back(std::move(p.key_cache));
    data.push_back(std::move(p.value_cache));
    data.push_back(as_bytes(p.block_table));
    data.push_back(as_bytes(p.context_lens));
    if (shape.alibi) data.push_back(as_bytes(p.alibi_slopes));
    data.push_back(r.out_storage(def.dtype));
    data.push_back(as_bytes(r.out));
    data.push_back(as_bytes(r.lse));
    add_datasets(shape, std::move(data), &file);
  } else {
    ref::CacheCopyProblem p = generate_copy_problem(def);
    ref::CacheCopyProblem expected = p;
    const bool gather = def.family == PC_FAMILY_GATHER_CACHED_KV;
    if (gather) {
      ref::gather_cached_kv(expected);
    } else {
      ref::reshape_and_cache(expected);
    }
    shape.cache = p.cache;
    shape.tokens = p.key_layout;
    shape.values = p.value_layout;
    put_shape_attrs(shape, &file.attrs);
    std::vector<std::vector<std::byte>> data;
    data.push_back(std::move(p.key_cache));
    data.push_back(std::move(p.value_cache));
    data.push_back(as_bytes(p.slot_mapping));
    data.push_back(std::move(p.key));
    data.push_back(std::move(p.value));
    data.push_back(gather ? std::move(expected.key) : std::move(expected.key_cache));
    data.push_back(gather ? std::move(expected.value) : std::move(expected.value_cache));
    add_datasets(shape, std::move(data), &file);
  }
  add_case_attributes(def, &file.attrs);
  return file;
}

}  // namespace pagecheck::verify::golden
