/// Strict loading of a golden file into reference problems and expected outputs.
#include <cstring>
#include <set>

#include "golden_schema.h"
#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {
namespace {

template <typename T>
std::vector<T> values_of(const GoldenFile& file, const std::string& path) {
  const GoldenDataset* d = file.find(path);
  std::vector<T> values(d->bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), d->bytes.data(), values.size() * sizeof(T));
  return values;
}

std::vector<std::byte> bytes_of(const GoldenFile& file, const std::string& path) {
  return file.find(path)->bytes;
}

}  // namespace

LoadedGolden parse_golden(GoldenFile raw, const std::string& path) {
  const int64_t version = attr_int(raw, "schema_version", path);
  if (version != kSchemaVersion) {
    throw GoldenError(path, "attribute schema_version",
                      "unsupported schema version " + std::to_string(version) +
                          " (this build reads version " + std::to_string(kSchemaVersion) + ")");
  }
  LoadedGolden g;
  g.path = path;
  g.name = attr_string(raw, "case_name", path);
  g.description = attr_string(raw, "description", path);
  g.seed = attr_uint(raw, "seed", path);
  g.reference_version = attr_string(raw, "reference_version", path);
  const CaseShape shape = parse_shape_attrs(raw, path);
  g.family = shape.family;
  g.dtype = shape.dtype;

  const std::vector<DatasetSpec> specs = dataset_specs(shape);
  std::set<std::string> known;
  for (const DatasetSpec& spec : specs) {
    check_dataset(spec, raw.find(spec.path), path);
    known.insert(spec.path);
  }
  for (const GoldenDataset& d : raw.datasets) {
    if (known.count(d.path) == 0) {
      throw GoldenError(path, d.path,
                        "unexpected dataset (not part of schema version " +
                            std::to_string(kSchemaVersion) + " for " +
                            attr_string(raw, "family", path) + ")");
    }
  }

  try {
    if (shape.family == PC_FAMILY_PAGED_ATTENTION) {
      ref::PagedAttentionProblem& p = g.attention;
      p.dtype = shape.dtype;
      p.num_seqs = shape.num_seqs;
      p.num_heads = shape.num_heads;
      p.max_blocks_per_seq = shape.max_blocks_per_seq;
      p.scale = attr_float(raw, "scale", path);
      p.query_layout = shape.tokens;
      p.cache = shape.cache;
      p.query = bytes_of(raw, "inputs/query");
      p.key_cache = bytes_of(raw, "inputs/key_cache");
      p.value_cache = bytes_of(raw, "inputs/value_cache");
      p.block_table = values_of<int32_t>(raw, "inputs/block_table");
      p.context_lens = values_of<int32_t>(raw, "inputs/context_lens");
      if (shape.alibi) p.alibi_slopes = values_of<float>(raw, "inputs/alibi_slopes");
      g.expected_out = bytes_of(raw, "expected/out");
      g.expected_out_f64 = values_of<double>(raw, "expected/out_f64");
      g.expected_lse = values_of<double>(raw, "expected/lse");
      p.validate();
    } else {
      const bool gather = shape.family == PC_FAMILY_GATHER_CACHED_KV;
      ref::CacheCopyProblem& p = g.copy;
      p.dtype = shape.dtype;
      p.cache = shape.cache;
      p.key_layout = shape.tokens;
      p.value_layout = shape.values;
      p.key_cache = bytes_of(raw, "inputs/key_cache");
      p.value_cache = bytes_of(raw, "inputs/value_cache");
      p.slot_mapping = values_of<int64_t>(raw, "inputs/slot_mapping");
      p.key = bytes_of(raw, "inputs/key");
      p.value = bytes_of(raw, "inputs/value");
      g.expected_first = bytes_of(raw, gather ? "expected/key" : "expected/key_cache");
      g.expected_second = bytes_of(raw, gather ? "expected/value" : "expected/value_cache");
      p.validate();
    }
  } catch (const GoldenError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw GoldenError(path, "inputs", std::string("inconsistent problem: ") + e.what());
  }
  g.raw = std::move(raw);
  return g;
}

LoadedGolden load_golden(const std::string& path) {
  return parse_golden(read_golden_file(path), path);
}

}  // namespace pagecheck::verify::golden
