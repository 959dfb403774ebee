#pragma once
/// The repository a command works on, found from a directory (normally the current one) the way
/// git finds its work tree: the first of the directory and its parents that holds a marker file.
/// Shared by `pagecheck review` (tools/review) and the golden fixtures (verify/golden).
#include <optional>
#include <string>

namespace pagecheck::verify {

/// File (relative to the root) whose presence marks the repository root.
inline constexpr const char* kRepoRootMarker = "kernels/families.json";

/// The first of `start` (made absolute) and its parents that holds `marker`; nullopt when none
/// does or `start` cannot be made absolute.
std::optional<std::string> find_repo_root(const std::string& start,
                                          const std::string& marker = kRepoRootMarker);

}  // namespace pagecheck::verify
