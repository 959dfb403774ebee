/// HDF5 form of the ragged batch: the batch_* root attributes and its index datasets.
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

DatasetSpec context_lens_spec(int64_t num_seqs) {
  return array_spec("inputs/context_lens", ElementType::kInt32, {num_seqs});
}
DatasetSpec block_table_spec(int64_t num_seqs, int64_t columns) {
  return array_spec("inputs/block_table", ElementType::kInt32, {num_seqs, columns});
}
DatasetSpec query_start_spec(int64_t num_seqs) {
  return array_spec("inputs/query_start", ElementType::kInt32, {num_seqs + 1});
}

}  // namespace

void write_batch(const ref::RaggedBatch& b, GoldenFile& file) {
  AttrMap& a = file.attrs;
  a["batch_num_seqs"] = b.num_seqs;
  a["batch_max_blocks_per_seq"] = b.max_blocks_per_seq;
  a["batch_block_table_stride"] = b.block_table_stride;
  a["batch_block_table_padding"] = int64_t{b.block_table_padding};
  a["batch_context_len_bound"] = b.context_len_bound;
  a["batch_has_query_start"] = int64_t{b.query_start.empty() ? 0 : 1};
  add_dataset(file, context_lens_spec(b.num_seqs), as_bytes(b.context_lens));
  add_dataset(file, block_table_spec(b.num_seqs, b.max_blocks_per_seq), as_bytes(b.block_table));
  if (!b.query_start.empty()) {
    add_dataset(file, query_start_spec(b.num_seqs), as_bytes(b.query_start));
  }
}

ref::RaggedBatch read_batch(GoldenReader& r) {
  ref::RaggedBatch b;
  b.num_seqs = r.integer("batch_num_seqs");
  b.max_blocks_per_seq = r.integer("batch_max_blocks_per_seq");
  b.block_table_stride = r.integer("batch_block_table_stride");
  const int64_t padding = r.integer("batch_block_table_padding");
  if (padding < INT32_MIN || padding > INT32_MAX) {
    throw GoldenError(r.path(), "attribute batch_block_table_padding",
                      std::to_string(padding) + " is not an int32 block index");
  }
  b.block_table_padding = static_cast<int32_t>(padding);
  b.context_len_bound = r.integer("batch_context_len_bound");
  if (b.num_seqs < 0 || b.max_blocks_per_seq < 0) {
    throw GoldenError(r.path(), "attributes batch_num_seqs / batch_max_blocks_per_seq",
                      "must not be negative");
  }
  b.context_lens = r.values<int32_t>(context_lens_spec(b.num_seqs));
  b.block_table = r.values<int32_t>(block_table_spec(b.num_seqs, b.max_blocks_per_seq));
  if (r.flag("batch_has_query_start")) {
    b.query_start = r.values<int32_t>(query_start_spec(b.num_seqs));
  }
  return b;
}

}  // namespace pagecheck::verify::golden
