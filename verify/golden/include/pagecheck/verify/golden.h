#pragma once
/// Golden fixtures: load a committed golden case (fixtures/golden/<name>.h5) into reference
/// problems plus expected outputs, and run every kernel variant against every golden on the
/// GPU. The file format is documented in docs/fixtures.md.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/golden_file.h"

namespace pagecheck {
class VariantRegistry;
}

namespace pagecheck::verify::golden {

/// Version of the file layout this build reads and writes (root attribute schema_version).
inline constexpr int64_t kSchemaVersion = 1;
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
  DType dtype = DType::kFloat16;                 ///< storage dtype
  uint64_t seed = 0;                             ///< generator seed
  std::string reference_version;                 ///< reference version that produced the outputs

  ref::PagedAttentionProblem attention;  ///< paged_attention inputs
  std::vector<std::byte> expected_out;   ///< attention output in the storage dtype, packed
  std::vector<double> expected_out_f64;  ///< attention output in float64 [seq, head, dim]
  std::vector<double> expected_lse;      ///< log-sum-exp of the logits [seq, head]

  ref::CacheCopyProblem copy;  ///< gather / reshape inputs (key/value or caches before the call)
  std::vector<std::byte> expected_first;   ///< gather: key (key_layout); reshape: key_cache
  std::vector<std::byte> expected_second;  ///< gather: value (value_layout); reshape: value_cache

  GoldenFile raw;  ///< every attribute and dataset as read
};

/// Reads and validates a golden file: schema version, family, every attribute the schema
/// requires, every dataset's presence, element type, shape and SHA-256, and the problem's own
/// consistency. Throws GoldenError naming the file and the dataset or attribute otherwise.
LoadedGolden load_golden(const std::string& path);

/// Validates an already-read file (as load_golden does after reading); `path` names it in
/// errors.
LoadedGolden parse_golden(GoldenFile raw, const std::string& path);

/// The golden directory used when none is given: $PAGECHECK_FIXTURES_DIR/golden when the
/// variable is set (it names the fixtures root), otherwise the source tree's fixtures/golden
/// (compiled in).
std::string default_golden_dir();

/// Paths of the golden files listed in `dir`/MANIFEST.json, in manifest order. Throws
/// GoldenError naming the manifest when it is missing or malformed.
std::vector<std::string> list_goldens(const std::string& dir);

/// Largest accepted |kernel - reference_f64| for one attention output element stored in
/// `dtype`: 2 ulp of the dtype at |reference| (the final rounding plus one more) plus
/// 4 eps(dtype) * max_abs_value (error of intermediates kept in the storage dtype, e.g. the
/// softmax weights, against values of magnitude up to max_abs_value). eps = ulp(1): 2^-10
/// float16, 2^-7 bfloat16, 2^-23 float32. Provisional; the verify issue may tighten it.
double attention_tolerance(DType dtype, double reference, double max_abs_value);

/// Runs every variant of `registry` on every golden of `dir` that it supports (dtype, head size,
/// block size, ALiBi and padded-stride capabilities) on the current CUDA device: attention
/// within attention_tolerance of the float64 reference, copies bit for bit over the whole
/// output buffers (so untouched rows and padding are checked too). Prints one line per
/// (golden, variant) and a summary to `out`. Returns 0 when every run passed, 1 when one
/// failed, 3 when no CUDA device is usable (the reason is printed). Throws GoldenError on a
/// bad golden (exit 2 in the CLI).
int verify_goldens_on_device(const VariantRegistry& registry, const std::string& dir,
                             std::ostream& out);

}  // namespace pagecheck::verify::golden

namespace pagecheck::verify {
// The entry points under the names the brief uses.
using golden::attention_tolerance;
using golden::load_golden;
using golden::verify_goldens_on_device;
}  // namespace pagecheck::verify
