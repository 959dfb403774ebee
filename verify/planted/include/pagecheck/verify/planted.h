#pragma once
/// Deliberately broken kernel variants for `pagecheck selftest`: each plants one real bug class
/// that verification must catch, next to correct "control" variants built from the same
/// simple kernels (so a catch is due to the bug, not to the kernel). They are registered only
/// into a registry the self-test owns, never into the normal one.
#include <string>
#include <vector>

#include "pagecheck/plugin.h"

namespace pagecheck {
class VariantRegistry;
}

namespace pagecheck::verify {

/// One planted variant.
struct PlantedVariant {
  std::string name;         ///< variant name, e.g. "planted_skip_last_partial_block"
  pc_family family;         ///< kernel family
  bool control;             ///< true: correct (verification must pass)
  std::string description;  ///< the bug, in one line
};

/// Every planted variant, bugs and controls (also in builds without CUDA).
const std::vector<PlantedVariant>& planted_catalogue();

/// True when the planted CUDA kernels were compiled into this build.
bool planted_variants_available();

/// Registers every planted variant into `registry` (no-op without CUDA). Never call it on the
/// registry `pagecheck verify` uses.
void register_planted_variants(VariantRegistry& registry);

}  // namespace pagecheck::verify
