#pragma once
/// The fixed, seeded case lists of the GPU tests ("quick": the sanitizer set; "full": the rest).
#include <vector>

#include "case_builder.h"

namespace pagecheck::gpu_test {

std::vector<AttentionCase> quick_attention_cases();
std::vector<AttentionCase> full_attention_cases();
std::vector<CopyCase> quick_copy_cases();
std::vector<CopyCase> full_copy_cases();

}  // namespace pagecheck::gpu_test
