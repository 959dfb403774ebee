/// Temporary files next to outputs, renamed into place.
#include "pagecheck/verify/check/atomic_write.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace pagecheck::verify::check {

namespace fs = std::filesystem;

std::string make_temp_next_to(const std::string& path) {
  const fs::path target(path);
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string suffix = ".pagecheck-tmp";  // .gitignore covers *.pagecheck-tmp
  std::string pattern = (folder / ("." + target.filename().string() + ".XXXXXX" + suffix)).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    throw std::runtime_error("cannot create a temporary file for '" + path +
                             "': " + std::strerror(errno));
  }
  ::close(fd);
  return std::string(name.data());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temp = make_temp_next_to(path);
  bool ok = false;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    ok = static_cast<bool>(out);
  }
  std::error_code ec;
  if (ok) fs::rename(temp, path, ec);
  if (!ok || ec) {
    fs::remove(temp);
    throw std::runtime_error("cannot write '" + path + "'" + (ec ? ": " + ec.message() : ""));
  }
}

}  // namespace pagecheck::verify::check
