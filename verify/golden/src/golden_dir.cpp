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

}  // namespace pagecheck::verify::golden
