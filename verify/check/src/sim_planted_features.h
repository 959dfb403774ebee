#pragma once
/// CPU simulations of the planted bug classes of issues 15 and 16 (internal to the "sim"
/// backend, sim_backend.cpp). The attention ones run the planted kernel's own row
/// (pagecheck/verify/planted_row.h) on the host, control and bugs alike, with the same
/// declarations (pagecheck/verify/planted_features.h); the fp8 saturation bug of
/// reshape_and_cache is the reference with the overflowing codes replaced.
#include <functional>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::check {

/// One simulated variant: its caps and what it computes (attention or copy, as its family).
struct FeatureSim {
  gen::VariantCaps caps;  ///< declared as the planted variant of the same class
  std::function<std::vector<double>(const ref::PagedAttentionProblem&)> attention;  ///< output
  std::function<void(ref::CacheCopyProblem&)> copy;  ///< in-place copy on the buffers
  bool control = false;                              ///< true: must pass
};

/// The simulations: "sim_" + the planted name without "planted_" (e.g. sim_k_scale_on_v,
/// sim_control_features, sim_reshape_fp8_no_saturation).
std::vector<FeatureSim> planted_feature_sims();
/// Names of the simulations that must pass (`control`) or be caught.
std::vector<std::string> planted_feature_sim_names(bool control);

}  // namespace pagecheck::verify::check
