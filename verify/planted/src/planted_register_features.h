#pragma once
/// Registration of the generic planted variants of issues 15 and 16 (internal).
#include "pagecheck/registry.h"
#include "pagecheck/verify/planted.h"

namespace pagecheck::verify {

/// Registers `p` when it is one of the generic variants (planted_features.h); false otherwise.
bool register_feature_variant(VariantRegistry& registry, const PlantedVariant& p);

}  // namespace pagecheck::verify
