#pragma once
/// Which evidence unit (kernels/families.json entry) records the results of each variant run by
/// `verify --record` and `bench --record`: a family's built-in variants go to its unit without
/// a variant list, a plugin's variants to the unit that names them (docs/review.md).
#include <string>
#include <vector>

#include "pagecheck/review/families.h"

namespace pagecheck::cli {

/// Checks, before any GPU work, that every variant of the loaded plugins (filtered by
/// `family` and `variant` when not empty) has a unit in <repo>/kernels/families.json
/// (review::recording_unit_for throws EvidenceError, exit 2, naming the entry to add), and
/// throws UsageError (exit 2) when none of the selected variants has a unit at all. Returns
/// the units of the selected built-in variants, each once (for check_record_sources).
std::vector<review::FamilySources> check_record_units(const std::string& repo,
                                                      const std::vector<std::string>& plugins,
                                                      const std::string& family,
                                                      const std::string& variant);

/// Throws UsageError when the sources of one of `units` (check_record_units' result) in `repo`
/// are not the ones this binary was built from (built_sources.h): evidence is filed under the
/// repository's hash, so the kernels that ran must be those.
void check_record_sources(const std::string& repo, const std::vector<review::FamilySources>& units);

}  // namespace pagecheck::cli
