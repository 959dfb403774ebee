/// The fixed, seeded case lists of the GPU tests. Together they cover every dtype, head size
/// and block size (attention and copies), GQA/MQA, ALiBi, context lengths 1, a block, a block
/// +- 1 and v2_split partition boundaries (256, 257, 511, 512, 513, 2049, 4096, and partitions
/// of 384 and 512 tokens chosen from the grid), shared prefix
/// blocks, padded caches, strided query / output / rows, slot -1, flat and peaked attention,
/// finite and bit-pattern copies. Each case is a gen spec (case_builder.h).
#include "fixed_cases.h"

namespace pagecheck::gpu_test {
using DT = DType;

std::vector<AttentionCase> quick_attention_cases() {
  std::vector<AttentionCase> v;
  v.push_back(
      Attention("f32_h64_b8_edges_alibi", DT::kFloat32, 64, 8, 4, 4, {1, 8, 9, 17}, 11).alibi());
  v.push_back(
      Attention("f16_h128_b16_gqa_peaked_shared", DT::kFloat16, 128, 16, 8, 2, {15, 16, 33}, 12)
          .peaked()
          .shared_prefix());
  v.push_back(
      Attention("bf16_h256_b32_mqa_padded_strided", DT::kBFloat16, 256, 32, 4, 1, {31, 64}, 13)
          .padded_cache()
          .strided_query()
          .strided_out());
  v.push_back(
      Attention("f16_h80_b8_partition_edges", DT::kFloat16, 80, 8, 2, 2, {257, 511}, 14).alibi());
  return v;
}

std::vector<AttentionCase> full_attention_cases() {
  std::vector<AttentionCase> v;
  v.push_back(Attention("f32_h80_b16_gqa", DT::kFloat32, 80, 16, 6, 3, {5, 100}, 21));
  v.push_back(Attention("f32_h96_b32_alibi", DT::kFloat32, 96, 32, 4, 4, {32, 33, 1}, 22).alibi());
  v.push_back(Attention("f32_h112_b8_mqa_padded", DT::kFloat32, 112, 8, 2, 1, {40}, 23)
                  .padded_cache()
                  .strided_out());
  v.push_back(
      Attention("f32_h192_b16_long_peaked", DT::kFloat32, 192, 16, 2, 2, {2049, 700}, 24).peaked());
  v.push_back(Attention("f32_h256_b32_gqa", DT::kFloat32, 256, 32, 4, 2, {256, 300}, 25));
  v.push_back(Attention("f32_h128_b32_alibi_peaked", DT::kFloat32, 128, 32, 4, 4, {2000}, 26)
                  .alibi()
                  .peaked());
  v.push_back(
      Attention("f16_h64_b32_prime_batch", DT::kFloat16, 64, 32, 7, 7, {1, 2, 3, 4, 5}, 31));
  v.push_back(Attention("f16_h96_b16_strided", DT::kFloat16, 96, 16, 4, 2, {77, 128}, 32)
                  .strided_query()
                  .strided_out());
  v.push_back(Attention("f16_h112_b32_alibi_peaked", DT::kFloat16, 112, 32, 8, 8, {512, 513}, 33)
                  .alibi()
                  .peaked());
  v.push_back(Attention("f16_h192_b8_mqa", DT::kFloat16, 192, 8, 4, 1, {1000}, 34));
  v.push_back(
      Attention("f16_h256_b16_long_peaked", DT::kFloat16, 256, 16, 2, 2, {4096}, 35).peaked());
  v.push_back(
      Attention("f16_h128_b16_heads40_gqa", DT::kFloat16, 128, 16, 40, 8, {513, 1, 1025, 64}, 36));
  // Grids that make v2_split pick partitions other than 256 (choose_partition_size, with the
  // H200's 528 resident partition blocks at float16 / head 128 / block 16): one sequence x 40
  // heads x 4096 or 3841 tokens -> 384-token partitions in one wave (the last one 256 tokens,
  // or 1); 16 sequences x 40 heads up to 2049 tokens -> 512-token partitions.
  // One sequence x 40 heads x 1000 tokens: 160 blocks of 256 and 320 of 128 both fit one wave
  // -> 128-token partitions (8 per row, the last 104 tokens); x 2048 tokens: 640 blocks of 128
  // do not -> 256-token partitions in one wave.
  v.push_back(Attention("f16_h128_b16_halves_1000", DT::kFloat16, 128, 16, 40, 40, {1000}, 137));
  v.push_back(
      Attention("f16_h128_b16_one_wave_2048", DT::kFloat16, 128, 16, 40, 40, {2048}, 138).peaked());
  // 8 sequences x 40 heads up to 512 tokens: 640 blocks of 256 need two waves, 320 rows fill
  // more than half of one -> one 512-token partition per row, no reduction.
  v.push_back(Attention("f16_h128_b16_row_per_block_512", DT::kFloat16, 128, 16, 40, 40,
                        {512, 300, 511, 1, 457, 512, 129, 400}, 139)
                  .alibi());
  v.push_back(
      Attention("f16_h128_b16_one_wave_4096", DT::kFloat16, 128, 16, 40, 40, {4096}, 37).alibi());
  v.push_back(Attention("f16_h128_b16_one_wave_3841", DT::kFloat16, 128, 16, 40, 40, {3841}, 38));
  v.push_back(
      Attention(
          "f16_h128_b16_many_waves", DT::kFloat16, 128, 16, 40, 40,
          {2049, 512, 513, 1, 1024, 1537, 700, 2048, 1536, 16, 1025, 2000, 511, 17, 1999, 1280}, 39)
          .peaked());
  v.push_back(
      Attention("bf16_h64_b16_alibi_gqa", DT::kBFloat16, 64, 16, 8, 4, {300, 17, 1}, 41).alibi());
  v.push_back(
      Attention("bf16_h80_b32_padded", DT::kBFloat16, 80, 32, 4, 4, {95}, 42).padded_cache());
  v.push_back(Attention("bf16_h96_b8_peaked", DT::kBFloat16, 96, 8, 2, 2, {1234}, 43).peaked());
  v.push_back(Attention("bf16_h112_b16_gqa", DT::kBFloat16, 112, 16, 6, 2, {60, 61}, 44));
  v.push_back(Attention("bf16_h128_b8_shared_prefix", DT::kBFloat16, 128, 8, 4, 4, {24, 20}, 45)
                  .shared_prefix());
  v.push_back(Attention("bf16_h192_b32_alibi_fused_q", DT::kBFloat16, 192, 32, 4, 2, {257}, 46)
                  .alibi()
                  .strided_query());
  return v;
}

std::vector<CopyCase> quick_copy_cases() {
  std::vector<CopyCase> v;
  v.push_back(Copy("f16_h128_b8", DT::kFloat16, 128, 8, 4, 37, 16, 5, 101));
  v.push_back(Copy("f32_h64_b16_padded_strided", DT::kFloat32, 64, 16, 2, 20, 4, 3, 102)
                  .padded_cache()
                  .strided_tokens());
  v.push_back(Copy("bf16_h256_b32_mqa", DT::kBFloat16, 256, 32, 1, 5, 2, 0, 103));
  return v;
}

std::vector<CopyCase> full_copy_cases() {
  std::vector<CopyCase> v;
  v.push_back(Copy("f32_h80_b8", DT::kFloat32, 80, 8, 3, 30, 8, 4, 111));
  v.push_back(Copy("f32_h96_b32", DT::kFloat32, 96, 32, 2, 64, 4, 7, 112).bits());
  v.push_back(Copy("f32_h112_b16_padded", DT::kFloat32, 112, 16, 2, 17, 4, 2, 113).padded_cache());
  v.push_back(Copy("f32_h192_b8", DT::kFloat32, 192, 8, 1, 9, 3, 0, 114));
  v.push_back(
      Copy("f32_h256_b16_strided", DT::kFloat32, 256, 16, 2, 12, 2, 5, 115).strided_tokens());
  v.push_back(Copy("f32_h128_b32", DT::kFloat32, 128, 32, 4, 50, 4, 6, 116));
  v.push_back(Copy("f16_h64_b16", DT::kFloat16, 64, 16, 8, 100, 16, 9, 121).bits());
  v.push_back(Copy("f16_h80_b32_strided", DT::kFloat16, 80, 32, 2, 33, 2, 4, 122).strided_tokens());
  v.push_back(Copy("f16_h96_b8", DT::kFloat16, 96, 8, 3, 7, 2, 0, 123));
  v.push_back(Copy("f16_h112_b16_padded", DT::kFloat16, 112, 16, 2, 40, 8, 3, 124).padded_cache());
  v.push_back(Copy("f16_h192_b32", DT::kFloat16, 192, 32, 2, 64, 4, 8, 125));
  v.push_back(Copy("f16_h256_b8", DT::kFloat16, 256, 8, 2, 15, 4, 2, 126));
  v.push_back(Copy("f16_h128_b16_kv8_1000_tokens", DT::kFloat16, 128, 16, 8, 1000, 128, 11, 127));
  v.push_back(Copy("bf16_h64_b8", DT::kBFloat16, 64, 8, 4, 25, 8, 5, 131));
  v.push_back(Copy("bf16_h80_b16", DT::kBFloat16, 80, 16, 2, 16, 2, 0, 132).bits());
  v.push_back(Copy("bf16_h96_b32_padded_strided", DT::kBFloat16, 96, 32, 3, 41, 4, 3, 133)
                  .padded_cache()
                  .strided_tokens());
  v.push_back(Copy("bf16_h112_b8", DT::kBFloat16, 112, 8, 1, 8, 1, 4, 134));
  v.push_back(Copy("bf16_h128_b16", DT::kBFloat16, 128, 16, 2, 48, 8, 5, 135));
  v.push_back(Copy("bf16_h192_b16", DT::kBFloat16, 192, 16, 2, 19, 4, 6, 136));
  return v;
}

}  // namespace pagecheck::gpu_test
