#pragma once
/// Where a case's kernel runs: the GPU through the device runner (in the worker process) or a
/// CPU simulation (CI tests of the harness itself). run_case() drives either.
#include <memory>
#include <string>
#include <vector>

#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::check {

/// A variant a backend can run.
struct BackendVariant {
  std::string registry;          ///< "builtin", "planted", "plugin" or "sim"
  gen::VariantCaps caps;         ///< declared support (name, family, sizes, flags)
  std::string description;       ///< one line
  const void* handle = nullptr;  ///< backend-private (e.g. the VariantInfo)
  /// Declared determinism (caps.nondeterministic false, what ABI v1 variants and every built-in
  /// declare): two runs on the same inputs must give bit-identical outputs, else the case is
  /// `nondeterministic`. A variant that declares nondeterminism (e.g. atomics in a reduction)
  /// has each run compared with the reference instead.
  bool deterministic() const { return !caps.nondeterministic; }
};

/// Runs kernels on materialized problems.
class CaseBackend {
 public:
  virtual ~CaseBackend() = default;
  /// Every variant it can run (a stable list: pointers into it stay valid).
  virtual const std::vector<BackendVariant>& variants() const = 0;
  /// True when it can run at all; otherwise `reason` says why.
  virtual bool available(std::string* reason) const = 0;
  /// "NVIDIA H200 (sm_90, 132 SMs)" or "CPU simulation".
  virtual std::string description() const = 0;
  /// True for CPU simulations (they never count as a GPU).
  virtual bool is_simulation() const { return false; }
  /// CUDA devices visible to this process (cudaGetDeviceCount; 0 without CUDA or for a
  /// simulation): what `verify --devices all` spreads over.
  virtual int device_count() const { return 0; }
  /// Runs a paged-attention variant; the device output may use `out_layout` (strided). The
  /// output comes back densely packed [query rows, num_heads, head_size], starting as the
  /// output dtype's output poison (DTypeInfo::output_poison_bits) wherever the kernel writes
  /// nothing.
  /// `run` is 0 for a case's first run and 1 for its determinism re-run (same inputs, fresh
  /// outputs): the GPU backend uses another guard byte pattern for it, simulations of racy
  /// kernels use it so that their "races" are repeatable.
  virtual AttentionRun run_attention(const BackendVariant& v, const ref::PagedAttentionProblem& p,
                                     const ref::TokenLayout& out_layout, int run) = 0;
  /// Runs a gather variant (outputs start as p.key / p.value); `run` as for run_attention.
  virtual CopyRun run_gather(const BackendVariant& v, const ref::CacheCopyProblem& p, int run) = 0;
  /// Runs a reshape_and_cache variant (caches start as p.key_cache / p.value_cache); `run` as
  /// for run_attention.
  virtual CopyRun run_reshape(const BackendVariant& v, const ref::CacheCopyProblem& p, int run) = 0;
};

/// Finds a variant by registry, family and name across backends; nullptr when absent.
/// `owner` receives the backend that has it.
const BackendVariant* find_variant(const std::vector<CaseBackend*>& backends,
                                   const std::string& registry, pc_family family,
                                   const std::string& name, CaseBackend** owner);

}  // namespace pagecheck::verify::check
