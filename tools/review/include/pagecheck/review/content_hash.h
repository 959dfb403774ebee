#pragma once
/// Content hash of a kernel family: SHA-256 over its source files' relative paths and bytes, so
/// that evidence recorded for a hash belongs to exactly that code.
///
/// Hashed stream: "pagecheck-sources/1\n", then per file in ascending path order:
/// path, '\0', decimal byte count, '\0', the bytes.
#include <string>
#include <vector>

#include "pagecheck/review/families.h"

namespace pagecheck::review {

/// One source file: path relative to the repository root and its bytes.
struct SourceFile {
  std::string path;   ///< relative path, '/' separated
  std::string bytes;  ///< file content
};

/// Hex SHA-256 content hash of `files` (any order; sorted by path first). Throws
/// std::invalid_argument when a path appears twice.
std::string content_hash(std::vector<SourceFile> files);
/// The first 12 hex digits, used in evidence file names.
std::string short_hash(const std::string& hash);

/// A family's files and hash as they are in the working tree.
struct FamilyHash {
  std::string family;              ///< family name
  std::vector<std::string> files;  ///< matched files, relative, sorted
  std::string hash;                ///< content hash (64 hex digits)
};

/// Hashes `family` in the working tree under `repo`. Throws EvidenceError naming
/// kernels/families.json when no file matches the family's patterns.
FamilyHash working_tree_hash(const std::string& repo, const FamilySources& family);
/// Hashes `family` as it was in `commit` (files listed by `tree`, read with git); an empty
/// FamilyHash::hash when no file matched at that commit.
FamilyHash commit_hash(const std::string& repo, const std::string& commit,
                       const std::vector<std::string>& tree, const FamilySources& family);

}  // namespace pagecheck::review
