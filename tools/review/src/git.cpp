/// git subprocesses (bench::run_process: no shell, binary-safe output).
#include "pagecheck/review/git.h"

#include <stdexcept>

#include "pagecheck/bench/process.h"

namespace pagecheck::review {

GitResult run_git(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  const bench::ProcessResult p = bench::run_process(argv);
  return GitResult{p.exit_code, p.out, p.err};
}

namespace {
std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}
}  // namespace

std::optional<std::string> git_head(const std::string& repo) {
  const GitResult r = run_git(repo, {"rev-parse", "--verify", "--quiet", "HEAD"});
  if (r.exit_code != 0) return std::nullopt;
  return first_line(r.out);
}

bool git_dirty(const std::string& repo) {
  const GitResult r = run_git(repo, {"status", "--porcelain", "--untracked-files=no"});
  return r.exit_code == 0 && !r.out.empty();
}

std::string resolve_commit(const std::string& repo, const std::string& rev) {
  if (rev.empty() || rev[0] == '-') {
    throw std::invalid_argument("--base: '" + rev + "' is not a revision");
  }
  const GitResult r = run_git(repo, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (r.exit_code != 0) {
    throw std::invalid_argument("--base: unknown revision '" + rev + "' in git repository " + repo +
                                (r.exit_code < 0 ? " (cannot run git)" : ""));
  }
  return first_line(r.out);
}

std::vector<std::string> list_tree(const std::string& repo, const std::string& commit) {
  const GitResult r = run_git(repo, {"ls-tree", "-r", "-z", "--name-only", commit});
  if (r.exit_code != 0) {
    throw std::runtime_error("git ls-tree " + commit + " failed in " + repo + ": " + r.err);
  }
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\0', start);
    paths.push_back(r.out.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return paths;
}

std::optional<std::string> file_at(const std::string& repo, const std::string& commit,
                                   const std::string& path) {
  const GitResult r = run_git(repo, {"cat-file", "blob", commit + ":" + path});
  if (r.exit_code != 0) return std::nullopt;
  return r.out;
}

}  // namespace pagecheck::review
