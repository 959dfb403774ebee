#pragma once
/// Output paths of the CLI: checked before any work (exit 2 naming the option and the path;
/// the rules are those of every output of the harness, pagecheck/verify/output_path.h), and the
/// default run folder for artefacts, outside the source tree.
#include <string>

#include "pagecheck/verify/output_path.h"

namespace pagecheck::cli {

using verify::check_output_file;
using verify::check_output_folder;

/// A fresh run folder name for `command`'s default artefacts, outside the source tree:
/// `<temp dir>/pagecheck-runs/<command>-<UTC time>-<pid>` (temp dir: $TMPDIR, else /tmp).
/// Not created here: the run creates it when it writes the first artefact.
std::string default_run_folder(const std::string& command);

}  // namespace pagecheck::cli
