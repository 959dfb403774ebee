#pragma once
/// Writing output files without half-written results and without touching other files: the
/// content goes to a temporary file beside the target, created exclusively (an existing file of
/// that name is never overwritten or removed), which is renamed into place. One scheme for every
/// writer of the harness (reports, records, goldens, artefacts, JUnit, Markdown).
#include <string>

namespace pagecheck::verify {

/// Suffix of every temporary file the harness writes (the repository's .gitignore covers it).
inline constexpr const char* kTempSuffix = ".pagecheck-tmp";

/// The temporary file beside `target`: `<dir>/.<name>.<pid>.pagecheck-tmp` (hidden, covered by
/// the repository's .gitignore; golden regen's stale-temporary cleanup reads the PID from it).
std::string temp_path_beside(const std::string& target);

/// A temporary file beside a target, created empty and exclusively (mode 0666 less the umask);
/// removed when the guard goes out of scope unless commit() renamed it over the target.
class TempFile {
 public:
  /// Creates temp_path_beside(target); throws std::runtime_error naming `target` when it exists
  /// or cannot be created.
  explicit TempFile(const std::string& target);
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  /// Path of the temporary file.
  const std::string& path() const { return path_; }
  /// Renames the temporary file over `target` (atomic within one directory); throws
  /// std::runtime_error naming both on failure.
  void commit(const std::string& target);

 private:
  std::string path_;
};

/// Writes `text` to `path` through a TempFile and a rename, so `path` holds the old or the new
/// text, never half. Throws std::runtime_error "cannot write <path>: <reason>" (the temporary
/// is removed).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace pagecheck::verify
