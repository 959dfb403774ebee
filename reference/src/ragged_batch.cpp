/// RaggedBatch: query rows per sequence, context bounds, and the block table a kernel receives.
#include <algorithm>

#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

int64_t RaggedBatch::query_len(int64_t seq) const {
  if (query_start.empty()) return 1;
  return int64_t{query_start[seq + 1]} - query_start[seq];
}

int64_t RaggedBatch::query_begin(int64_t seq) const {
  return query_start.empty() ? seq : query_start[seq];
}

int64_t RaggedBatch::num_query_tokens() const {
  if (query_start.empty()) return num_seqs;
  return query_start.size() > static_cast<std::size_t>(num_seqs) ? query_start[num_seqs] : 0;
}

int64_t RaggedBatch::max_query_len() const {
  int64_t longest = 0;
  for (int64_t s = 0; s < num_seqs; ++s) longest = std::max(longest, query_len(s));
  return longest;
}

int64_t RaggedBatch::max_context_len() const {
  int64_t longest = 0;
  for (int32_t len : context_lens) longest = std::max<int64_t>(longest, len);
  return longest;
}

int64_t RaggedBatch::host_max_context_len() const {
  return context_len_bound > 0 ? context_len_bound : max_context_len();
}

int64_t RaggedBatch::table_stride() const {
  return block_table_stride > 0 ? block_table_stride : max_blocks_per_seq;
}

std::vector<int32_t> RaggedBatch::strided_block_table() const {
  const int64_t stride = table_stride();
  std::vector<int32_t> table(static_cast<std::size_t>(num_seqs * stride), block_table_padding);
  for (int64_t s = 0; s < num_seqs; ++s) {
    std::copy_n(block_table.begin() + s * max_blocks_per_seq, max_blocks_per_seq,
                table.begin() + s * stride);
  }
  return table;
}

}  // namespace pagecheck::ref
