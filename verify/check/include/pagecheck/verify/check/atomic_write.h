#pragma once
/// Writing output files without half-written results and without touching other files: the
/// content goes to a fresh temporary file next to the target (made with mkstemps, so an
/// existing `X.tmp` of the user is never overwritten or removed), which is renamed into place.
#include <string>

namespace pagecheck::verify::check {

/// Creates an empty, uniquely named file `.<name>.XXXXXX.pagecheck-tmp` in the folder of `path` and
/// returns its path. Throws std::runtime_error naming `path` when it cannot.
std::string make_temp_next_to(const std::string& path);

/// Writes `text` to `path` through make_temp_next_to + rename. On failure the temporary file
/// is removed and std::runtime_error names `path`.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace pagecheck::verify::check
