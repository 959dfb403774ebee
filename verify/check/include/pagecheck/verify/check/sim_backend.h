#pragma once
/// CPU simulations of kernel variants (registry "sim"), so that the whole verification
/// machinery (generators, worker protocol, shrinking, reports, artefacts) runs in CI without
/// a GPU. Correct simulations: the reference rounded to the dtype (declaring everything the
/// problem vocabulary expresses: page layouts, fp8 caches and scales, combined K/V,
/// multi-token queries, sinks, windows, soft-caps, context-0 rows left untouched), and a
/// float32 emulation of a split-K kernel (declaring its partition size) that the tolerance
/// must accept. sim_split_k_lowp also rounds weights, products and partition outputs to the
/// dtype (an engine-style kernel: it declares those roundings, and the tolerance follows its
/// declaration). Buggy simulations reproduce planted bug classes on the CPU.
#include <memory>
#include <string>
#include <vector>

#include "pagecheck/verify/check/backend.h"

namespace pagecheck::verify::check {

/// Names of the simulated variants that are correct (verification must pass).
std::vector<std::string> correct_sim_variants();
/// Names of the simulated planted bugs (verification must catch each one).
std::vector<std::string> buggy_sim_variants();

/// The CPU simulation backend. `allow_crash` also registers sim_crash (aborts the process on
/// cases with three or more sequences) and sim_hang (never returns on cases with five or more
/// sequences), only for worker-process tests.
std::unique_ptr<CaseBackend> make_sim_backend(bool allow_crash = false);

}  // namespace pagecheck::verify::check
