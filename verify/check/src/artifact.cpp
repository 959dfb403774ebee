/// Failure artefacts in HDF5 through verify/golden's GoldenFile writer and reader.
#include "pagecheck/verify/check/artifact.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck::verify::check {
namespace {

namespace golden = pagecheck::verify::golden;

template <typename T>
std::vector<std::byte> raw(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void add(golden::GoldenFile& file, const std::string& path, golden::ElementType type,
         std::vector<int64_t> dims, std::vector<std::byte> bytes) {
  golden::GoldenDataset d;
  d.path = path;
  d.type = type;
  d.dims = std::move(dims);
  d.bytes = std::move(bytes);
  if (golden::stored_as_bits(type)) d.attrs["dtype"] = std::string(golden::element_type_name(type));
  file.datasets.push_back(std::move(d));
}

/// A raw tensor of `dtype` (nothing for an empty one: the value cache of a combined cache).
void add_storage(golden::GoldenFile& file, const std::string& path, DType dtype,
                 const std::vector<std::byte>& bytes) {
  if (bytes.empty()) return;
  add(file, path, golden::element_type_of(dtype),
      {static_cast<int64_t>(bytes.size() / dtype_size(dtype))}, bytes);
}

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw std::invalid_argument("artefact " + path + ": " + what);
}

std::string attr_text(const golden::GoldenFile& f, const std::string& name,
                      const std::string& path) {
  auto it = f.attrs.find(name);
  if (it == f.attrs.end() || !std::holds_alternative<std::string>(it->second)) {
    bad(path, "missing string attribute '" + name + "'");
  }
  return std::get<std::string>(it->second);
}

/// The raw bytes of dataset `name`, which must hold exactly `bytes` bytes.
std::vector<std::byte> take(const golden::GoldenFile& f, const std::string& name, std::size_t bytes,
                            const std::string& path) {
  const golden::GoldenDataset* d = f.find(name);
  if (d == nullptr && bytes == 0) return {};  // an empty tensor is not stored
  if (d == nullptr) bad(path, "missing dataset '" + name + "'");
  if (d->bytes.size() != bytes) {
    bad(path, "dataset '" + name + "' holds " + std::to_string(d->bytes.size()) +
                  " bytes, the spec needs " + std::to_string(bytes));
  }
  return d->bytes;
}

}  // namespace

void write_artifact(const std::string& path, const ArtifactContents& c) {
  if (c.request == nullptr || c.result == nullptr) {
    throw std::invalid_argument("write_artifact: request and result are required");
  }
  golden::GoldenFile file;
  const gen::CaseSpec& spec = c.request->spec;
  file.attrs["artifact_schema"] = std::string(kArtifactSchema);
  file.attrs["registry"] = c.request->registry;
  file.attrs["variant"] = c.request->variant;
  file.attrs["family"] = std::string(family_name(gen::family_of(spec)));
  file.attrs["spec_json"] = gen::spec_to_json(spec).dump();
  file.attrs["spec_text"] = gen::describe(spec);
  file.attrs["reproduce"] = c.request->reproduce;
  file.attrs["outcome"] = std::string(outcome_name(c.result->outcome));
  file.attrs["message"] = c.result->message;
  const bool store = !gen::is_large(spec);
  file.attrs["tensors"] = std::string(
      store ? "stored" : "omitted: cache over 2^31 elements; replay re-materializes the spec");
  if (store && c.attention != nullptr) {
    const ref::PagedAttentionProblem& p = *c.attention;
    const ref::RaggedBatch& b = p.batch;
    add_storage(file, "inputs/query", p.dtype, p.query);
    add_storage(file, "inputs/key_cache", p.cache.dtype, p.key_cache);
    add_storage(file, "inputs/value_cache", p.cache.dtype, p.value_cache);
    add(file, "inputs/block_table", golden::ElementType::kInt32, {b.num_seqs, b.max_blocks_per_seq},
        raw(b.block_table));
    add(file, "inputs/context_lens", golden::ElementType::kInt32, {b.num_seqs},
        raw(b.context_lens));
    if (!p.features.alibi_slopes.empty()) {
      add(file, "inputs/alibi_slopes", golden::ElementType::kFloat32, {p.num_heads},
          raw(p.features.alibi_slopes));
    }
    const golden::ElementType out_type = golden::element_type_of(p.dtype);
    const std::vector<int64_t> dims{p.query_layout.num_tokens, p.num_heads, p.head_size()};
    if (c.reference != nullptr) {
      add(file, "expected/out", out_type, dims, c.reference->out_storage(p.dtype));
      add(file, "expected/out_f64", golden::ElementType::kFloat64, dims, raw(c.reference->out));
    }
    if (c.tolerance != nullptr) {
      add(file, "expected/tolerance", golden::ElementType::kFloat64, dims, raw(*c.tolerance));
    }
    if (c.actual_out != nullptr && !c.actual_out->empty()) {
      add(file, "actual/out", out_type, dims, *c.actual_out);
    }
    if (c.second_run_out != nullptr && !c.second_run_out->empty()) {
      add(file, "second_run/out", out_type, dims, *c.second_run_out);
    }
  }
  if (store && c.copy_inputs != nullptr) {
    const ref::CacheCopyProblem& p = *c.copy_inputs;
    add_storage(file, "inputs/key_cache", p.cache.dtype, p.key_cache);
    add_storage(file, "inputs/value_cache", p.cache.dtype, p.value_cache);
    add_storage(file, "inputs/key", p.dtype, p.key);
    add_storage(file, "inputs/value", p.dtype, p.value);
    add(file, "inputs/slot_mapping", golden::ElementType::kInt64,
        {static_cast<int64_t>(p.slot_mapping.size())}, raw(p.slot_mapping));
    const bool gather = gen::family_of(spec) == PC_FAMILY_GATHER_CACHED_KV;
    const DType out = gather ? p.dtype : p.cache.dtype;  // the outputs' dtype
    if (c.copy_expected != nullptr) {
      add_storage(file, "expected/first", out,
                  gather ? c.copy_expected->key : c.copy_expected->key_cache);
      add_storage(file, "expected/second", out,
                  gather ? c.copy_expected->value : c.copy_expected->value_cache);
    }
    if (c.actual_first != nullptr) add_storage(file, "actual/first", out, *c.actual_first);
    if (c.actual_second != nullptr) add_storage(file, "actual/second", out, *c.actual_second);
    if (c.second_run_first != nullptr) {
      add_storage(file, "second_run/first", out, *c.second_run_first);
    }
    if (c.second_run_second != nullptr) {
      add_storage(file, "second_run/second", out, *c.second_run_second);
    }
  }
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  verify::TempFile temp(path);  // created exclusively: never a file of the user's
  golden::write_golden_file(file, temp.path());
  temp.commit(path);
}

namespace {

/// Reads the file and checks its attributes and spec; fills `a` but not the tensors.
golden::GoldenFile read_header(const std::string& path, LoadedArtifact& a) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) bad(path, "no such file");
  if (std::filesystem::is_directory(status)) bad(path, "is a folder, not an HDF5 file");
  golden::GoldenFile f = golden::read_golden_file(path);
  if (attr_text(f, "artifact_schema", path) != kArtifactSchema) {
    bad(path, "attribute artifact_schema is not " + std::string(kArtifactSchema));
  }
  a.registry = attr_text(f, "registry", path);
  a.variant = attr_text(f, "variant", path);
  a.reproduce = attr_text(f, "reproduce", path);
  a.outcome = attr_text(f, "outcome", path);
  a.message = attr_text(f, "message", path);
  try {
    a.spec = gen::spec_from_json(nlohmann::json::parse(attr_text(f, "spec_json", path)));
    gen::validate(a.spec);
  } catch (const std::exception& e) {
    bad(path, std::string("attribute spec_json: ") + e.what());
  }
  a.tensors_stored = attr_text(f, "tensors", path) == "stored";
  return f;
}

}  // namespace

void check_artifact(const std::string& path) {
  LoadedArtifact header;
  read_header(path, header);
  if (header.tensors_stored) read_artifact(path);  // small: check every dataset's size
}

LoadedArtifact read_artifact(const std::string& path) {
  LoadedArtifact a;
  const golden::GoldenFile f = read_header(path, a);
  if (const auto* s = std::get_if<gen::AttentionSpec>(&a.spec)) {
    ref::PagedAttentionProblem p = gen::materialize(*s);  // layouts, table, slopes
    if (a.tensors_stored) {
      const std::size_t size = dtype_size(p.dtype), kv = dtype_size(p.cache.dtype);
      p.query = take(f, "inputs/query", p.query_layout.span() * size, path);
      p.key_cache = take(f, "inputs/key_cache", p.cache.key_span() * kv, path);
      p.value_cache = take(f, "inputs/value_cache", p.cache.value_span() * kv, path);
      std::vector<int32_t>& table_entries = p.batch.block_table;
      const auto table = take(f, "inputs/block_table", table_entries.size() * 4, path);
      std::memcpy(table_entries.data(), table.data(), table.size());
    }
    a.attention = std::move(p);
  } else {
    ref::CacheCopyProblem p = gen::materialize(std::get<gen::CopySpec>(a.spec));
    if (a.tensors_stored) {
      const std::size_t size = dtype_size(p.dtype), kv = dtype_size(p.cache.dtype);
      p.key_cache = take(f, "inputs/key_cache", p.cache.key_span() * kv, path);
      p.value_cache = take(f, "inputs/value_cache", p.cache.value_span() * kv, path);
      p.key = take(f, "inputs/key", p.key_layout.span() * size, path);
      p.value = take(f, "inputs/value", p.value_layout.span() * size, path);
    }
    a.copy = std::move(p);
  }
  return a;
}

}  // namespace pagecheck::verify::check
