#pragma once
/// Conditions of a recording run that a verification record carries and that no flag may
/// claim: whether it ran under compute-sanitizer (detected from the process environment and
/// its ancestors' command lines), whether the tree was a commit's.
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/review/evidence.h"

namespace pagecheck::review {

/// Environment variable compute-sanitizer sets for every process it tracks (seen with
/// compute-sanitizer 2025.3 for the target and the target's children).
inline constexpr const char* kSanitizerEnv = "NV_SANITIZER_INJECTION_PORT_BASE";

/// The sanitizer run seen by a process whose `injection_env` is the value of kSanitizerEnv
/// (nullopt: unset) and whose ancestors have the command lines `ancestors` (argv of the parent,
/// the grandparent, ...). Ran when the variable is set and the nearest ancestor whose argv[0]
/// is named compute-sanitizer tracks child processes (`--target-processes` absent or `all`:
/// the verify workers are children); its tool is `--tool` (default memcheck).
SanitizerRun sanitizer_from(const std::optional<std::string>& injection_env,
                            const std::vector<std::vector<std::string>>& ancestors);

/// sanitizer_from for this process (its environment and /proc/<pid>/cmdline of its ancestors).
SanitizerRun detect_sanitizer();

/// The `git_dirty` flag of a record written from `repo`: tracked files differ from HEAD, or
/// `repo` is no git checkout (nothing shows that the tree is a commit's).
bool record_dirty(const std::string& repo);

}  // namespace pagecheck::review
