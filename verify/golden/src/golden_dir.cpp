/// The golden directory of a command (given, $PAGECHECK_FIXTURES_DIR, or the repository found
/// from the current directory) and the up-front checks of output paths.
#include "pagecheck/verify/golden_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::verify::golden {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& option, const std::string& what) {
  throw std::invalid_argument(option + ": " + what);
}

/// The directory before validation, with its source.
GoldenDir locate(const std::string& given, const std::string& option) {
  std::error_code ec;
  if (!given.empty()) return {fs::absolute(given, ec).lexically_normal().string(), option};
  if (const char* env = std::getenv("PAGECHECK_FIXTURES_DIR"); env != nullptr && *env != '\0') {
    return {(fs::absolute(env, ec) / "golden").lexically_normal().string(),
            "$PAGECHECK_FIXTURES_DIR"};
  }
  const std::string cwd = fs::current_path(ec).string();
  const auto root = find_repo_root(cwd);
  if (!root) {
    bad(option, "not given, and no repository found from the current directory " + cwd + " (no " +
                    kRepoRootMarker + " in it or above it); give " + option + " DIR");
  }
  return {(fs::path(*root) / "fixtures" / "golden").string(), "found from the current directory"};
}

}  // namespace

GoldenDir resolve_golden_dir(const std::string& given, const std::string& option,
                             GoldenDirUse use) {
  GoldenDir dir = locate(given, option);
  const std::string where = "golden directory " + dir.path + " (" + dir.source + ")";
  std::error_code ec;
  const fs::file_status status = fs::status(dir.path, ec);
  if (!fs::exists(status)) bad(option, where + " does not exist");
  if (!fs::is_directory(status)) bad(option, where + " is not a directory");
  const fs::path manifest = fs::path(dir.path) / kManifestName;
  const fs::file_status manifest_status = fs::status(manifest, ec);
  if (fs::exists(manifest_status) && !fs::is_regular_file(manifest_status)) {
    bad(option, manifest.string() + " is not a regular file (a directory?)");
  }
  if (use == GoldenDirUse::kRead && !fs::exists(manifest_status)) {
    bad(option, where + " holds no " + kManifestName);
  }
  if (use == GoldenDirUse::kWrite && access(dir.path.c_str(), W_OK) != 0) {
    bad(option, where + " is not writable: " + std::strerror(errno));
  }
  return dir;
}

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) bad(option, "empty path");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) bad(option, "'" + path + "' is a directory, not a file");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    bad(option, "'" + path + "' is not a regular file");
  }
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    bad(option, "cannot create '" + path + "': " + parent.string() + " is not a directory");
  }
  // The report is written to a temporary file in the parent and renamed over `path`.
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    bad(option, "cannot create '" + path + "': " + parent.string() + ": " + std::strerror(errno));
  }
  if (fs::exists(status) && access(path.c_str(), W_OK) != 0) {
    bad(option, "cannot write '" + path + "': " + std::strerror(errno));
  }
}

}  // namespace pagecheck::verify::golden
