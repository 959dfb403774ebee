#pragma once
/// Which golden directory a command uses (no path compiled in), and the checks of the paths
/// `pagecheck golden` writes to, made before any work.
#include <string>

namespace pagecheck::verify::golden {

/// A resolved golden directory and where it came from.
struct GoldenDir {
  std::string path;    ///< absolute path of the directory
  std::string source;  ///< "--dir", "--golden-dir", "$PAGECHECK_FIXTURES_DIR" or
                       ///< "found from the current directory"
  /// "PATH (SOURCE)", as printed after "goldens: ".
  std::string describe() const { return path + " (" + source + ")"; }
};

/// What resolve_golden_dir requires of the directory.
enum class GoldenDirUse {
  kRead,   ///< check, verify --golden: MANIFEST.json must be there
  kWrite,  ///< regen: MANIFEST.json may be missing (created), the directory must be writable
};

/// The golden directory: `given` when not empty (source: `option`), else
/// $PAGECHECK_FIXTURES_DIR/golden when that variable is set (it names the fixtures root), else
/// fixtures/golden of the repository found from the current directory (the nearest directory
/// at or above it holding kernels/families.json). Throws std::invalid_argument (exit 2) naming
/// the path and `option` when no repository is found, the directory does not exist or is not a
/// directory, MANIFEST.json is not a regular file (or, for kRead, missing), or (kWrite) the
/// directory is not writable.
GoldenDir resolve_golden_dir(const std::string& given, const std::string& option,
                             GoldenDirUse use = GoldenDirUse::kRead);

}  // namespace pagecheck::verify::golden
