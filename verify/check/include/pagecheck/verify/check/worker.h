#pragma once
/// The worker side of case isolation: a process that owns the CUDA context (or a CPU
/// simulation), reads requests as JSON lines and answers each with one JSON line. When a case
/// leaves the context unusable (sticky error) the worker answers and exits, and the parent
/// starts a fresh one.
///
/// Protocol (one JSON object per line):
///   {"op":"hello"}                      -> {"available":bool,"reason":s,"device":s,"variants":[…]}
///   {"op":"run","request":{…}}          -> CaseResult
///   {"op":"replay","file":s,"ref_threads":n} -> CaseResult (bad file: outcome "error",
///                                           "bad_input": true)
///   {"op":"quit"}                       -> (exits)
#include <iosfwd>
#include <vector>

#include "pagecheck/verify/check/backend.h"

namespace pagecheck::verify::check {

/// Serves requests from `in` until it ends, "quit" arrives, or a result asks for a restart.
/// Returns 0 (also after a restart request), 2 on a malformed request line.
int serve_worker(std::istream& in, std::ostream& out, const std::vector<CaseBackend*>& backends);

/// Process entry of a worker: keeps the protocol on a private duplicate of stdout and points
/// file descriptor 1 at stderr (stray prints cannot corrupt the protocol), then serves stdin.
int worker_main(const std::vector<CaseBackend*>& backends);

}  // namespace pagecheck::verify::check
