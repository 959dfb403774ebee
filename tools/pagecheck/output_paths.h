#pragma once
/// Output paths of the CLI: checked before any work (exit 2 naming the option and the path),
/// and the default run folder for artefacts, outside the source tree.
#include <string>

namespace pagecheck::cli {

/// Throws UsageError naming `option` and `path` unless a file can be written at `path`: it
/// must not be a folder, its folder must exist and be writable (a temporary file is made next
/// to it and renamed), and an existing file must be writable. Checks with access(2) and
/// creates nothing. An empty `path` (option not given) passes.
void check_output_file(const std::string& path, const std::string& option);

/// Throws UsageError naming `option` and `path` unless files can be written under folder
/// `path`: it must be a writable folder, or not exist yet below a writable folder (it is made
/// later). Creates nothing. An empty `path` passes.
void check_output_folder(const std::string& path, const std::string& option);

/// A fresh run folder name for `command`'s default artefacts, outside the source tree:
/// `<temp dir>/pagecheck-runs/<command>-<UTC time>-<pid>` (temp dir: $TMPDIR, else /tmp).
/// Not created here: the run creates it when it writes the first artefact.
std::string default_run_folder(const std::string& command);

}  // namespace pagecheck::cli
