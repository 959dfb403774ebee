#pragma once
/// The reference self-check run by `pagecheck verify`: the CPU reference against the
/// independent dense oracle on a fixed, seeded set of small problems of all three families.
#include <cstdint>
#include <string>
#include <vector>

namespace pagecheck::verify {

/// One self-check case.
struct SelfcheckCase {
  std::string name;     ///< "paged_attention#3 float16 h128 b16 heads 8/2 ctx [1,16,15,17]..."
  std::string family;   ///< "paged_attention", "gather_cached_kv" or "reshape_and_cache"
  bool passed = false;  ///< reference and oracle agree within tolerance
  std::string detail;   ///< agreement summary, or what disagreed / the exception message
  double seconds = 0;   ///< wall time of the case (reference + oracle)
};

/// All cases of one self-check run.
struct SelfcheckReport {
  std::vector<SelfcheckCase> cases;  ///< in run order
  /// True when there is at least one case and every case passed.
  bool all_passed() const;
};

/// Runs `num_cases` cases drawn from std::mt19937_64(seed): the families alternate; dtypes,
/// head sizes (64..256 and small ones), cache kinds (x-split, NHD, HND) and fp8 caches (e4m3,
/// e5m2; per-tensor and per-kv-head scales) rotate; block sizes (8, 16, 32), MHA/GQA/MQA,
/// combined K/V, padded strides, shared blocks, edge context lengths (1, block, block - 1,
/// block + 1, and 0 now and then), 1..8 query tokens per sequence, ALiBi, sinks, sliding
/// windows, soft-caps and non-causal rows vary. The same seed and count always give the same
/// cases. Throws std::invalid_argument when num_cases < 1.
SelfcheckReport run_reference_selfcheck(uint64_t seed, int num_cases);

}  // namespace pagecheck::verify
