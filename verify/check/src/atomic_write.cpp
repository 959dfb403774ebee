/// Temporary files next to outputs, renamed into place.
#include "pagecheck/verify/check/atomic_write.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pagecheck::verify::check {

namespace fs = std::filesystem;

namespace {

/// The process umask, read without changing it (umask(2) would, racing other threads'
/// file creation): the "Umask:" line of /proc/self/status, else the usual 022.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

}  // namespace

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
  // mkstemps makes the file 0600; an output gets the mode a plain create would give it.
  const int rc = ::fchmod(fd, 0666 & ~current_umask());
  ::close(fd);
  if (rc != 0) {
    ::unlink(name.data());
    throw std::runtime_error("cannot set the mode of a temporary file for '" + path +
                             "': " + std::strerror(errno));
  }
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
