/// Output path checks and the default run folder.
#include "output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "commands.h"

namespace pagecheck::cli {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& option, const std::string& path,
                         const std::string& why) {
  throw UsageError(option + ": '" + path + "'" + why);
}

/// Where a temporary file next to `path` would go ("." for a bare name).
fs::path folder_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

/// Refuses unless `folder` is an existing, writable and searchable folder.
void require_writable_folder(const fs::path& folder, const std::string& option,
                             const std::string& path, const std::string& role) {
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  if (!fs::exists(st))
    refuse(option, path, ": " + role + " '" + folder.string() + "' does not exist");
  if (!fs::is_directory(st)) {
    refuse(option, path, ": " + role + " '" + folder.string() + "' is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    refuse(
        option, path,
        ": " + role + " '" + folder.string() + "' is not writable (" + std::strerror(errno) + ")");
  }
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) refuse(option, path, " is a folder, expected a file");
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st)) refuse(option, path, " is not a regular file");
    if (::access(path.c_str(), W_OK) != 0) {
      refuse(option, path, std::string(" is not writable (") + std::strerror(errno) + ")");
    }
  } else if (!path.empty() && path.back() == '/') {
    refuse(option, path, " names a folder, expected a file");
  }
  require_writable_folder(folder_of(path), option, path, "its folder");
}

void check_output_folder(const std::string& path, const std::string& option) {
  if (path.empty()) return;
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

std::string default_run_folder(const std::string& command) {
  std::error_code ec;
  fs::path temp = fs::temp_directory_path(ec);
  if (ec) temp = "/tmp";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return (temp / "pagecheck-runs" / (command + "-" + stamp + "-" + std::to_string(::getpid())))
      .string();
}

}  // namespace pagecheck::cli
