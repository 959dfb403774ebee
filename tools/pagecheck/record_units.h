#pragma once
/// Which evidence unit (kernels/families.json entry) records the results of each variant run by
/// `verify --record` and `bench --record`: a family's built-in variants go to its unit without
/// a variant list, a plugin's variants to the unit that names them (docs/review.md).
#include <string>
#include <vector>

#include "pagecheck/review/families.h"

namespace pagecheck::cli {

/// The unit holding `variant`'s evidence, or nullptr for a built-in variant that no unit holds
/// (not recorded: the repository holds only other kernels' evidence). Throws UsageError for a
/// variant from a plugin (`builtin` false) that no unit holds, naming `families_file` and the
/// entry to add: its results would otherwise be claimed for code nobody hashed.
const review::FamilySources* record_unit_for(const std::vector<review::FamilySources>& units,
                                             const std::string& families_file,
                                             const std::string& family, const std::string& variant,
                                             bool builtin);

/// Checks, before any GPU work, that every variant of the loaded plugins (filtered by
/// `family` and `variant` when not empty) has a unit in <repo>/kernels/families.json; throws
/// UsageError (exit 2) otherwise, and when none of the selected variants has a unit at all.
void check_record_units(const std::string& repo, const std::vector<std::string>& plugins,
                        const std::string& family, const std::string& variant);

}  // namespace pagecheck::cli
