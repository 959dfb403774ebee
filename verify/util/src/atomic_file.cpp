/// Temporary files beside their targets, renamed into place (see atomic_file.h).
#include "pagecheck/verify/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace pagecheck::verify {

namespace fs = std::filesystem;

std::string temp_path_beside(const std::string& target) {
  const fs::path p(target);
  return (p.parent_path() /
          ("." + p.filename().string() + "." + std::to_string(::getpid()) + kTempSuffix))
      .string();
}

TempFile::TempFile(const std::string& target) : path_(temp_path_beside(target)) {
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const std::string reason = std::strerror(errno);
    path_.clear();  // not ours: never remove it
    throw std::runtime_error("cannot write " + target + ": cannot create " +
                             temp_path_beside(target) + ": " + reason);
  }
  ::close(fd);
}

TempFile::~TempFile() {
  std::error_code ec;
  if (!path_.empty()) fs::remove(path_, ec);
}

void TempFile::commit(const std::string& target) {
  std::error_code ec;
  fs::rename(path_, target, ec);
  if (ec) {
    throw std::runtime_error("cannot write " + target + ": rename from " + path_ + ": " +
                             ec.message());
  }
  path_.clear();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  TempFile temp(path);
  std::FILE* file = std::fopen(temp.path().c_str(), "wb");
  if (file == nullptr) {
    throw std::runtime_error("cannot write " + path + ": cannot open " + temp.path() + ": " +
                             std::strerror(errno));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    throw std::runtime_error("cannot write " + path + ": " +
                             std::strerror(written ? errno : write_errno));
  }
  temp.commit(path);
}

}  // namespace pagecheck::verify
