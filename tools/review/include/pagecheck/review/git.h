#pragma once
/// The few git queries the review needs, run as `git -C <repo> ...` without a shell.
#include <optional>
#include <string>
#include <vector>

namespace pagecheck::review {

/// Exit status and output of one git command.
struct GitResult {
  int exit_code = -1;  ///< git's exit status (-1: could not run git)
  std::string out;     ///< stdout, byte for byte
  std::string err;     ///< stderr
};

/// Runs `git -C repo args...`; never throws for a failing command (see exit_code).
GitResult run_git(const std::string& repo, const std::vector<std::string>& args);

/// HEAD's commit id, or nullopt when `repo` is not a git work tree or git is missing.
std::optional<std::string> git_head(const std::string& repo);
/// True when tracked files differ from HEAD (untracked files are ignored).
bool git_dirty(const std::string& repo);
/// The commit id `rev` names; throws std::invalid_argument naming `rev` and the repository
/// when it names no commit.
std::string resolve_commit(const std::string& repo, const std::string& rev);
/// Every file path in `commit`'s tree (recursive, relative to the root).
std::vector<std::string> list_tree(const std::string& repo, const std::string& commit);
/// Bytes of `path` in `commit`, or nullopt when the commit has no such file.
std::optional<std::string> file_at(const std::string& repo, const std::string& commit,
                                   const std::string& path);

}  // namespace pagecheck::review
