#pragma once
/// Golden fixtures: load a committed golden case (fixtures/golden/<name>.h5) into reference
/// problems plus expected outputs, and run every kernel variant against every golden on the
/// GPU. The file format is documented in docs/fixtures.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/device_runner.h"
#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck {
class VariantRegistry;
}

namespace pagecheck::verify::golden {

/// Version of the file layout this build reads and writes (root attribute schema_version).
/// Version 2: the problem vocabulary of issue 12 (cache descriptor, ragged batch, features) and
/// the case spec; files of version 1 are refused with the command that regenerates them.
inline constexpr int64_t kSchemaVersion = 2;
/// Version string of the CPU reference recorded in every golden (root reference_version).
/// Bump it, and regenerate with --force, when the reference's results are meant to change.
inline constexpr const char* kReferenceVersion = "pagecheck-ref 1 (float64 accumulation)";
/// Name of the manifest inside a golden directory.
inline constexpr const char* kManifestName = "MANIFEST.json";

/// A golden case as loaded from its file: the inputs as reference problems and the outputs the
/// reference produced. Only the members of the case's family are filled.
struct LoadedGolden {
  std::string path;                              ///< file it was loaded from
  std::string name;                              ///< case name (root attribute case_name)
  std::string description;                       ///< one line (root attribute description)
  pc_family family = PC_FAMILY_PAGED_ATTENTION;  ///< kernel family
  DType dtype = DType::kFloat16;  ///< query / output (attention) or contiguous K/V dtype
  uint64_t seed = 0;              ///< content seed (root attribute seed)
  std::string reference_version;  ///< reference version that produced the outputs
  gen::CaseSpec spec;             ///< the case (root attribute spec, gen's JSON form)

  ref::PagedAttentionProblem attention;  ///< paged_attention inputs
  std::vector<std::byte> expected_out;   ///< attention output in `dtype`, packed
  std::vector<double> expected_out_f64;  ///< attention output in float64 [row, head, dim]
  std::vector<double> expected_lse;      ///< log-sum-exp of each row's logits [row, head]

  ref::CacheCopyProblem copy;  ///< gather / reshape inputs (key/value or caches before the call)
  std::vector<std::byte> expected_first;   ///< gather: key (key_layout); reshape: key_cache
  std::vector<std::byte> expected_second;  ///< gather: value; reshape: value_cache (empty when
                                           ///< the cache is combined)

  GoldenFile raw;  ///< every attribute and dataset as read
};

/// Reads and validates a golden file: schema version, family, every attribute the schema
/// requires, every dataset's presence, element type, shape and SHA-256, and the problem's own
/// consistency. Throws GoldenError naming the file and the dataset or attribute otherwise.
LoadedGolden load_golden(const std::string& path);

/// Validates an already-read file (as load_golden does after reading); `path` names it in
/// errors.
LoadedGolden parse_golden(GoldenFile raw, const std::string& path);

/// Paths of the golden files listed in `dir`/MANIFEST.json, in manifest order. Throws
/// GoldenError naming the manifest when it is missing or malformed, or an entry when its file
/// is an absolute path or leaves the directory (`..`). The directory of a command comes from
/// resolve_golden_dir (golden_dir.h).
std::vector<std::string> list_goldens(const std::string& dir);

/// Runs every variant of `registry` on every golden of `dir` that it supports (dtypes, head
/// size, block size, cache kind, scale kind, query length and the PC_CAP_* flags the golden
/// needs) on the current CUDA device: attention
/// within the tolerance of verify/tolerance (tolerance.h) of the float64 reference, copies bit for
/// bit over the whole output buffers (so untouched rows and padding are checked too). Prints one
/// line per golden with its variants' verdicts and a summary to `out` (see verify_goldens_with,
/// which it calls with device_golden_runner()). Returns 0 when every run passed, 1 when one failed
/// or no golden ran although the manifest lists cases, 3 when no CUDA device is usable (the reason
/// is printed). Throws GoldenError on a bad golden (exit 2 in the CLI).
int verify_goldens_on_device(const VariantRegistry& registry, const std::string& dir,
                             std::ostream& out);

/// The run functions verify_goldens_with calls for each (golden, variant) pair it runs.
/// device_golden_runner() binds the real GPU runner; tests inject CPU fakes. A function that
/// throws counts as a failed run with a sticky error (verification stops, exit 3).
struct GoldenRunner {
  /// Runs a paged-attention variant; AttentionRun::out densely packed in the storage dtype.
  std::function<AttentionRun(const VariantInfo&, const ref::PagedAttentionProblem&)>
      paged_attention;
  /// Runs a gather variant; CopyRun::first/second are the whole key/value outputs.
  std::function<CopyRun(const VariantInfo&, const ref::CacheCopyProblem&)> gather_cached_kv;
  /// Runs a reshape_and_cache variant; CopyRun::first/second are the whole caches after it.
  std::function<CopyRun(const VariantInfo&, const ref::CacheCopyProblem&)> reshape_and_cache;
};

/// The real GPU run functions (run_paged_attention, run_gather_cached_kv,
/// run_reshape_and_cache with default options) on the current CUDA device.
GoldenRunner device_golden_runner();

/// Counts of one golden verification.
struct GoldenTally {
  int64_t listed = 0;       ///< cases MANIFEST.json lists
  int64_t loaded = 0;       ///< golden files loaded
  int64_t goldens_run = 0;  ///< goldens on which at least one variant ran (passed or failed)
  int64_t passed = 0;       ///< (golden, variant) runs within tolerance / bit-exact
  int64_t failed = 0;       ///< (golden, variant) runs that failed
  int64_t skipped = 0;      ///< (golden, variant) pairs not run (capability or refusal)
};

/// The device-independent part of verify_goldens_on_device: lists and loads the goldens of
/// `dir`, skips the variants that do not declare what a golden needs, runs the rest through
/// `runner` and compares (attention within the tolerance of verify/tolerance of the float64
/// reference, copies bit for bit). Prints one line per golden with each variant's verdict, one line
/// per failed run naming golden and variant ("FAIL <golden> / <variant>: <what>"), and a summary.
/// Returns 0 when every run passed and at least one golden ran; 1 when a run failed, or when
/// the manifest lists cases but none was loaded or run (so it can never pass silently); 3 when
/// a run left the device unusable (it stops there). Throws GoldenError on a bad golden or
/// manifest. `tally`, when given, receives the counts.
int verify_goldens_with(const VariantRegistry& registry, const std::string& dir,
                        const GoldenRunner& runner, std::ostream& out,
                        GoldenTally* tally = nullptr);

}  // namespace pagecheck::verify::golden

namespace pagecheck::verify {
// The entry points under the names the brief uses.
using golden::load_golden;
using golden::verify_goldens_on_device;
}  // namespace pagecheck::verify
