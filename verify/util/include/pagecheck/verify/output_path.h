#pragma once
/// The checks every output option of the harness gets before any work starts (`--json`,
/// `--markdown`, `--junit`, `--plot`, `--artifacts`, ...): one rule set, one wording. A refused
/// path throws std::invalid_argument "OPTION: 'PATH' <why>" (the command exits 2) and nothing
/// has been written. The checks create nothing that stays: whether a file can be made in the
/// target's folder is tried with the same exclusive temporary the write will use (TempFile,
/// removed at once), so a folder that access(2) calls writable but that cannot hold a file
/// (`/proc`, a read-only mount seen by root) is refused here, not after the work.
#include <string>
#include <vector>

namespace pagecheck::verify {

/// Folders below a repository root (the nearest folder holding kRepoRootMarker) that hold its
/// recorded evidence: goldens, verification records, bandwidth reports. Only the commands that
/// record evidence write there (`golden regen`, `verify --record`, `bench --record`, `bench
/// record`), and they replace a changed file only with --force.
inline constexpr const char* kEvidenceFolders[] = {"fixtures/golden", "fixtures/verification",
                                                   "fixtures/bandwidth"};

/// Checks that `option` may write the file `path`: not a folder (nor a name ending in '/'), its
/// folder exists and a file can be created in it, an existing file is a regular, writable file,
/// `path` is none of `inputs` and lies in none of them (a command never writes over what it
/// reads: the reports it compares, the shards it merges, the golden folder it checks), and it
/// lies in no evidence folder (kEvidenceFolders) of the repository around it. An empty `path`
/// (the option not given) passes.
void check_output_file(const std::string& path, const std::string& option,
                       const std::vector<std::string>& inputs = {});

/// Checks that `option` may write files under the folder `path`: an existing folder in which a
/// file can be created, or a path not made yet whose nearest existing ancestor is such a folder
/// (the rest is made later); and it is none of `inputs` and lies in none of them. An empty
/// `path` passes.
void check_output_folder(const std::string& path, const std::string& option,
                         const std::vector<std::string>& inputs = {});

}  // namespace pagecheck::verify
