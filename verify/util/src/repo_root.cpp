/// The repository root: the nearest directory at or above a start directory holding a marker.
#include "pagecheck/verify/repo_root.h"

#include <filesystem>

namespace pagecheck::verify {

namespace fs = std::filesystem;

std::optional<std::string> find_repo_root(const std::string& start, const std::string& marker) {
  std::error_code ec;
  fs::path p = fs::absolute(start, ec);
  while (!ec && !p.empty()) {
    if (fs::exists(p / marker, ec)) return p.string();
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return std::nullopt;
}

}  // namespace pagecheck::verify
