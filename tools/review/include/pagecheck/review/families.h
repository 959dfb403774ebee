#pragma once
/// Which source files make up each kernel family. The list lives in the repository, in
/// kernels/families.json:
///
///     {"schema": "pagecheck.families/1",
///      "families": [{"name": "paged_attention",
///                    "sources": ["kernels/src/paged_attention*.cu*", "kernels/include/..."]}]}
///
/// Patterns are fnmatch(3) globs relative to the repository root; `*`, `?` and `[...]` never
/// match `/` (FNM_PATHNAME), so a pattern names files of one directory level.
///
/// Each entry is an *evidence unit*: the files whose content hash names its evidence. An entry
/// without "variants" holds the evidence of its family's built-in variants. An entry with
/// "family" and "variants" holds the evidence of exactly those variants, wherever they are
/// registered (a plugin's kernels):
///
///     {"name": "my_gather", "family": "gather_cached_kv", "variants": ["my_gather_v2"],
///      "sources": ["src/*.cu", "src/*.h"]}
#include <stdexcept>
#include <string>
#include <vector>

namespace pagecheck::review {

/// Path of the family list relative to the repository root.
inline constexpr const char* kFamiliesFile = "kernels/families.json";
/// Its schema tag (required).
inline constexpr const char* kFamiliesSchema = "pagecheck.families/1";

/// Bad evidence or configuration (unreadable, corrupt, inconsistent); the message names the
/// file. Derives from std::invalid_argument: the CLI exits 2 on it.
struct EvidenceError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// One evidence unit's declared sources.
struct FamilySources {
  std::string name;  ///< unit name (names the evidence files), e.g. "paged_attention"
  std::vector<std::string> patterns;  ///< globs relative to the repository root
  std::string family;                 ///< kernel family of its variants (default: `name`)
  /// Variants whose evidence the unit holds; empty: the family's built-in variants.
  std::vector<std::string> variants;

  /// The kernel family: `family`, or `name` when that is empty.
  const std::string& kernel_family() const { return family.empty() ? name : family; }
};

/// True when `pattern` names only paths inside the repository: relative, no ".." component.
bool glob_inside_repository(const std::string& pattern);

/// Parses the text of a families file; throws EvidenceError naming `origin` and the problem: a
/// missing or unknown "schema" (kFamiliesSchema), an empty "families", a source glob that
/// reaches outside the repository (glob_inside_repository), a bad or duplicate entry.
std::vector<FamilySources> parse_family_sources(const std::string& text, const std::string& origin);
/// Reads <repo>/kernels/families.json; throws EvidenceError naming the path.
std::vector<FamilySources> load_family_sources(const std::string& repo);
/// The entry named `family`; throws EvidenceError listing the known families.
const FamilySources& find_family(const std::vector<FamilySources>& families,
                                 const std::string& family, const std::string& origin);

/// The unit holding the evidence of variant `variant` of kernel family `family`: the unit that
/// lists it in "variants", else, for a variant built into pagecheck (`builtin`), the family's
/// unit without a variant list; nullptr when no unit holds it.
const FamilySources* evidence_unit_for(const std::vector<FamilySources>& units,
                                       const std::string& family, const std::string& variant,
                                       bool builtin);

/// The unit that records variant `variant`'s results: evidence_unit_for, or nullptr for a
/// built-in variant that no unit holds (not recorded: the repository holds only other kernels'
/// evidence). Throws EvidenceError, naming `families_file` and the entry to add, for a variant
/// that is not built in and that no unit holds: its results would otherwise be claimed for
/// sources nobody hashed.
const FamilySources* recording_unit_for(const std::vector<FamilySources>& units,
                                        const std::string& families_file, const std::string& family,
                                        const std::string& variant, bool builtin);

/// True when relative path `path` matches `pattern` (fnmatch with FNM_PATHNAME).
bool path_matches(const std::string& pattern, const std::string& path);
/// The `candidates` matching any of `patterns`, sorted and without duplicates.
std::vector<std::string> match_paths(const std::vector<std::string>& patterns,
                                     const std::vector<std::string>& candidates);
/// Regular files of the working tree under `repo` matching `patterns` (relative paths,
/// sorted). Directories named .git or build* are not searched.
std::vector<std::string> resolve_sources(const std::string& repo,
                                         const std::vector<std::string>& patterns);

/// True when `repo` holds pagecheck's own built-in kernels: `units` has an entry without
/// "variants" (one holding a family's built-in variants), or kernels/src/builtin_variants.*
/// exists (the built-in variant descriptors). A plugin's repository has neither.
bool holds_builtin_kernels(const std::string& repo, const std::vector<FamilySources>& units);

/// Throws EvidenceError naming <repo>/kernels/families.json when an entry's kernel family is
/// not one of `kernel_families` (the families pagecheck implements), or when the repository
/// holds the built-in kernels (holds_builtin_kernels) but a family of `kernel_families` has
/// no entry without "variants". An empty `kernel_families` checks nothing.
void check_builtin_families(const std::string& repo, const std::vector<FamilySources>& units,
                            const std::vector<std::string>& kernel_families);

/// The repository root: the first of `start` and its parents that holds kernels/families.json,
/// else `fallback`.
std::string find_repo_root(const std::string& start, const std::string& fallback);

}  // namespace pagecheck::review
