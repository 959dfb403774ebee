/// Output path checks (output_path.h).
#include "pagecheck/verify/output_path.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::verify {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& option, const std::string& path,
                         const std::string& why) {
  throw std::invalid_argument(option + ": '" + path + "'" + why);
}

/// Where a temporary file next to `path` would go ("." for a bare name).
fs::path folder_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

/// `p` made absolute with its links and dot segments resolved as far as it exists.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p, ec).lexically_normal() : r;
}

/// True when `p` is `folder` or lies below it (both resolved).
bool within(const fs::path& p, const fs::path& folder) {
  const fs::path rel = p.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

/// Refuses unless `folder` is an existing folder in which a file can be created: the write's
/// own temporary (TempFile beside a name in it) is made and removed.
void require_writable_folder(const fs::path& folder, const std::string& option,
                             const std::string& path, const std::string& role) {
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  if (!fs::exists(st)) {
    refuse(option, path, ": " + role + " '" + folder.string() + "' does not exist");
  }
  if (!fs::is_directory(st)) {
    refuse(option, path, ": " + role + " '" + folder.string() + "' is not a folder");
  }
  try {
    TempFile probe((folder / "pagecheck-output-check").string());
  } catch (const std::runtime_error&) {
    const std::string reason = ::access(folder.c_str(), W_OK | X_OK) != 0
                                   ? std::strerror(errno)
                                   : "no file can be created in it";
    refuse(option, path,
           ": " + role + " '" + folder.string() + "' is not writable (" + reason + ")");
  }
}

/// Refuses `path` when it is one of `inputs` or lies in one of them.
void require_not_an_input(const std::string& path, const std::string& option,
                          const std::vector<std::string>& inputs) {
  const fs::path out = resolved(path);
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const fs::path in = resolved(input);
    if (out == in) refuse(option, path, " is an input of this command; choose another path");
    std::error_code ec;
    if (fs::is_directory(in, ec) && within(out, in)) {
      refuse(option, path, " lies in '" + input + "', an input of this command");
    }
  }
}

/// Refuses `path` when it lies in an evidence folder of the repository around it.
void require_outside_evidence(const std::string& path, const std::string& option) {
  const fs::path out = resolved(path);
  const std::optional<std::string> root = find_repo_root(out.parent_path().string());
  if (!root) return;
  for (const char* folder : kEvidenceFolders) {
    if (within(out, resolved(fs::path(*root) / folder))) {
      refuse(option, path,
             std::string(" lies in ") + folder +
                 ", the repository's recorded evidence: only the recording commands write "
                 "there (golden regen, verify --record, bench --record, bench record)");
    }
  }
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option,
                       const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) refuse(option, path, " is a folder, expected a file");
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st)) refuse(option, path, " is not a regular file");
    if (::access(path.c_str(), W_OK) != 0) {
      refuse(option, path, std::string(" is not writable (") + std::strerror(errno) + ")");
    }
  } else if (path.back() == '/') {
    refuse(option, path, " names a folder, expected a file");
  }
  require_not_an_input(path, option, inputs);
  require_outside_evidence(path, option);
  require_writable_folder(folder_of(path), option, path, "its folder");
}

void check_output_folder(const std::string& path, const std::string& option,
                         const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  require_not_an_input(path, option, inputs);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) refuse(option, path, " is not a folder");
    require_writable_folder(path, option, path, "folder");
    return;
  }
  // The nearest existing ancestor must be a writable folder (the rest is created later).
  fs::path ancestor = fs::absolute(path, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec) && ancestor != ancestor.root_path()) {
    ancestor = ancestor.parent_path();
  }
  require_writable_folder(ancestor, option, path, "parent folder");
}

}  // namespace pagecheck::verify
