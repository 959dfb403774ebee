/// A worker process serving the CPU simulations (including the crashing and hanging ones) for
/// the engine tests.
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/worker.h"

int main() {
  const auto backend = pagecheck::verify::check::make_sim_backend(/*allow_crash=*/true);
  return pagecheck::verify::check::worker_main({backend.get()});
}
