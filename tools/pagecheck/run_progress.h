#pragma once
/// Progress and interruption of long runs (verify, selftest). On a terminal, stderr shows one
/// line rewritten in place; when stdout is not a terminal (CI logs), a progress line goes to
/// stdout about every 10 s (PAGECHECK_PROGRESS_INTERVAL seconds, for tests), and at once when
/// the run changes phase (e.g. starts shrinking). SIGINT asks the run to stop: cases already
/// running finish, the partial summary is printed, and the command exits 130; a second SIGINT
/// ends the process at once.
#include <functional>
#include <string>

namespace pagecheck::cli {

/// Exit status of a run stopped by SIGINT (128 + 2, the shell's convention).
inline constexpr int kInterruptedExit = 130;

/// The progress callback for the verifier (check::VerifyOptions::progress); may be empty when
/// neither stderr nor stdout wants progress.
std::function<void(const std::string&)> progress_printer();

/// Installs the SIGINT handler (once per process; a SIGINT ignored at start stays ignored);
/// interrupted() turns true on the first one.
void catch_interrupt();
/// True after SIGINT, once catch_interrupt() was called.
bool interrupted();

}  // namespace pagecheck::cli
