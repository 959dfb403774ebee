#pragma once
/// Helpers of the golden tests: temporary directories, a freshly regenerated golden set, byte
/// snapshots of a directory (to prove nothing was written) and in-place file edits.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dir_lock.h"
#include "manifest.h"
#include "pagecheck/verify/golden_file.h"
#include "pagecheck/verify/golden_tools.h"
#include "pagecheck/verify/sha256.h"

namespace pagecheck::verify::golden::testing {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("pagecheck-golden-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  /// The directory.
  std::string str() const { return path_.string(); }
  /// A path inside it.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// Every byte of a file.
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes raw bytes to a file.
inline void put_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// File name -> SHA-256 of the bytes of every entry of a directory (hidden temporaries
/// included; regen's empty lock file left out), to prove that nothing was written.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& item : fs::directory_iterator(dir)) {
    if (item.path().filename() == kLockName) continue;
    files[item.path().filename().string()] = sha256_file_hex(item.path().string());
  }
  return files;
}

/// Makes MANIFEST.json of `dir` describe the current file of case `name` (as a regeneration by
/// a changed reference would), so that only the content checks can object to it.
inline void record_in_manifest(const std::string& dir, const std::string& name) {
  nlohmann::json manifest = read_manifest(dir);
  for (auto& entry : manifest.at("cases")) {
    if (entry.at("name") != name) continue;
    const std::string path = (fs::path(dir) / (name + ".h5")).string();
    entry = manifest_entry(find_case(name), read_golden_file(path), path);
  }
  write_manifest(dir, make_manifest(manifest.at("cases")));
}

/// A complete golden set regenerated from the catalogue once per test binary (read-only: copy
/// it with copy_goldens before changing anything).
inline const std::string& pristine_goldens() {
  static TempDir dir;
  static const bool built = [] {
    std::ostringstream log;
    return regen_goldens(RegenOptions{dir.str(), {}, false}, log) == 0;
  }();
  if (!built) throw std::runtime_error("regenerating the goldens failed");
  static const std::string path = dir.str();
  return path;
}

/// A golden directory with only `cases` (and their manifest), regenerated once per test binary
/// and name list; enough for tests that damage one file and expect check to exit 2.
inline std::string partial_goldens(const std::vector<std::string>& cases) {
  static std::map<std::vector<std::string>, std::unique_ptr<TempDir>> dirs;
  auto& dir = dirs[cases];
  if (!dir) {
    dir = std::make_unique<TempDir>();
    std::ostringstream log;
    if (regen_goldens(RegenOptions{dir->str(), cases, false}, log) != 0) {
      throw std::runtime_error("regenerating the goldens failed: " + log.str());
    }
  }
  return dir->str();
}

/// Copies every file of `from` (except regen's lock file) into the (existing) directory `to`.
inline void copy_goldens(const std::string& from, const std::string& to) {
  for (const auto& item : fs::directory_iterator(from)) {
    if (item.path().filename() == kLockName) continue;
    fs::copy_file(item.path(), fs::path(to) / item.path().filename(),
                  fs::copy_options::overwrite_existing);
  }
}

/// Reads `path`, lets `edit` change the model, writes it back (as the writer would).
inline void rewrite(const std::string& path, const std::function<void(GoldenFile&)>& edit) {
  GoldenFile file = read_golden_file(path);
  edit(file);
  write_golden_file(file, path);
}

/// The dataset at `name`, for editing (throws when absent).
inline GoldenDataset& dataset(GoldenFile& file, const std::string& name) {
  for (GoldenDataset& d : file.datasets) {
    if (d.path == name) return d;
  }
  throw std::runtime_error("no dataset " + name);
}

/// Recomputes a dataset's sha256 attribute after its bytes were edited.
inline void refresh_sha(GoldenDataset& d) {
  d.attrs["sha256"] = sha256_hex(d.bytes.data(), d.bytes.size());
}

}  // namespace pagecheck::verify::golden::testing
