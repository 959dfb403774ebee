/// Range checks of the bench options (no CUDA needed).
#include <stdexcept>
#include <string>

#include "pagecheck/bench/runner.h"

namespace pagecheck::bench {

void BenchOptions::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (device < 0) bad("--device must be >= 0");
  if (warmup < 0) bad("--warmup must be >= 0");
  if (min_samples < 5) bad("--min-samples must be >= 5");
  if (max_samples < min_samples) bad("--max-samples must be >= --min-samples");
  if (!(max_noise > 0)) bad("--max-noise must be positive");
  if (!(timeout_s > 0)) bad("--timeout must be positive");
  if (ceiling_bytes < (16ll << 20)) bad("ceiling buffer must be at least 16 MiB");
  if (!(ceiling_tolerance >= 1.0)) bad("ceiling tolerance must be >= 1");
}

}  // namespace pagecheck::bench
