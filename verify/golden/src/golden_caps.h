#pragma once
/// Which goldens a variant may run: everything a golden needs (dtypes, sizes, cache kind, scale
/// kind, PC_CAP_* flags, query length, context-0 rows) against what the variant declares.
#include <string>

#include "pagecheck/registry.h"
#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {

/// Why `variant` cannot run `golden` ("alibi not declared", "cache kind nhd not declared",
/// ...), or "" when it declares everything the golden needs.
std::string unsupported_reason(const VariantInfo& variant, const LoadedGolden& golden);

}  // namespace pagecheck::verify::golden
