#pragma once
/// The bandwidth report: what one `pagecheck bench` run measured, with the provenance a reviewer
/// needs (device, driver, clocks, CUDA version, git revision, kernel sources' content hash).
/// Stored as JSON (schema "pagecheck.bandwidth/1"); recorded copies live under
/// fixtures/bandwidth/<unit>-<hash12>.json.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/bench/bytes.h"
#include "pagecheck/bench/shapes.h"
#include "pagecheck/bench/statistics.h"

namespace pagecheck::bench {

/// Schema tag written into every report.
inline constexpr const char* kReportSchema = "pagecheck.bandwidth/1";

/// A report that cannot be read or is inconsistent; the message names the file and field.
/// Derives from std::invalid_argument: the CLI exits 2 on it.
struct ReportError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Outcome of one variant on one shape.
enum class RunStatus {
  kOk,           ///< measured
  kUnsupported,  ///< the variant does not handle the shape (declared or can_implement)
  kFailed,       ///< launch failed or the output check failed (message says which)
};
/// "ok", "unsupported", "failed".
const char* status_name(RunStatus status);

/// A result faster than this multiple of its family's ceiling (measured in the same run) is
/// flagged `above_ceiling`: the ceiling, the byte count or the measurement is wrong.
inline constexpr double kCeilingTolerance = 1.05;

/// Measurement of one variant on one shape.
struct VariantResult {
  std::string variant;                ///< variant name
  RunStatus status = RunStatus::kOk;  ///< outcome
  std::string message;                ///< why unsupported / failed, or a measurement note
  SampleSummary time_us;              ///< kernel time per call, microseconds (cold samples)
  double gbps = 0;                    ///< effective bandwidth: shape bytes / median time
  double ceiling_share = 0;           ///< gbps / the family's ceiling gbps
  bool above_ceiling = false;         ///< ceiling_share > kCeilingTolerance: suspicious, flagged
  bool converged = true;              ///< noise reached the target before the sample/time cap
};

/// All variants on one shape.
struct ShapeResult {
  BenchShape shape;                     ///< the problem
  ByteCount bytes;                      ///< bytes the kernel must move (bytes.h)
  std::vector<VariantResult> variants;  ///< one per benchmarked variant, in report order
  /// The result of `variant`, or nullptr.
  const VariantResult* find(const std::string& variant) const;
};

/// A bandwidth ceiling measured in the same run.
struct CeilingResult {
  std::string kind;       ///< "copy" (device-to-device cudaMemcpyAsync) or "read" (streaming)
  std::string method;     ///< one line: how it was measured
  int64_t bytes = 0;      ///< bytes moved per call (copy: read + written)
  SampleSummary time_us;  ///< time per call, microseconds
  double gbps = 0;        ///< bytes / median time
};

/// The least time any launch takes in this run: an empty kernel (one block of 32 threads) timed
/// exactly like the kernels (cold L2, the blocking kernel, CUDA events around the launch). A
/// small shape's median minus this is what its kernel itself costs; a result well below it
/// (marked_below_floor) means the timing is wrong.
struct LaunchFloor {
  std::string method;     ///< one line: how it was measured
  SampleSummary time_us;  ///< time per launch, microseconds; no samples: not measured (older
                          ///< reports have no floor)
  /// True when the run measured the floor.
  bool measured() const { return time_us.samples > 0; }
};

/// A result whose median is below this fraction of the launch floor is marked: no kernel
/// launch can take less than an empty one timed the same way.
inline constexpr double kFloorTolerance = 0.95;

/// The device and software the report was measured on.
struct Environment {
  std::string device;                ///< e.g. "NVIDIA H200"
  std::string compute_capability;    ///< e.g. "9.0"
  int64_t sm_count = 0;              ///< multiprocessors
  int64_t l2_bytes = 0;              ///< L2 cache size
  int64_t memory_bytes = 0;          ///< global memory size
  std::string pci_bus_id;            ///< e.g. "0000:19:00.0"
  std::string driver_version;        ///< display driver, e.g. "570.124.06" (nvidia-smi)
  std::string cuda_driver_version;   ///< CUDA version the driver supports, e.g. "12.8"
  std::string cuda_runtime_version;  ///< CUDA runtime the tool was built with, e.g. "13.0"
  int64_t sm_clock_mhz = 0;          ///< current SM clock when measured
  int64_t mem_clock_mhz = 0;         ///< current memory clock when measured
  int64_t max_sm_clock_mhz = 0;      ///< maximum SM clock
  int64_t max_mem_clock_mhz = 0;     ///< maximum memory clock
  std::string clock_source;          ///< "nvidia-smi" or "cudaDeviceGetAttribute (peak only)"
};

/// How samples were taken.
struct MethodSettings {
  std::string timing = "cold";  ///< each sample after an L2 flush, CUDA events
  int64_t l2_flush_bytes = 0;   ///< size of the buffer memset before every sample
  int64_t warmup = 0;           ///< untimed launches before sampling
  int64_t min_samples = 0;      ///< samples taken at least
  int64_t max_samples = 0;      ///< samples taken at most
  double max_noise = 0;         ///< stop once noise (IQR / median) is below this
  double timeout_s = 0;         ///< stop sampling one measurement after this wall time
  uint64_t seed = 0;            ///< seed of the random inputs and block tables
};

/// One bench run of one kernel family.
struct BenchReport {
  std::string schema = kReportSchema;  ///< schema tag
  std::string tool_version;            ///< "pagecheck 0.1.0"
  std::string family;                  ///< family name, e.g. "paged_attention"
  /// Evidence unit (kernels/families.json entry) the report was recorded for when it is not
  /// named after the family, as for a plugin's variants; empty: the family's built-in unit.
  std::string unit;
  std::string source_hash;            ///< SHA-256 content hash of the unit's kernel sources
  std::string git_revision;           ///< commit of the tree measured ("unknown" outside git)
  bool git_dirty = false;             ///< the working tree differed from git_revision
  std::string date;                   ///< UTC, ISO 8601
  std::string sweep;                  ///< "default", "quick" or "custom"
  Environment environment;            ///< device and software
  MethodSettings method;              ///< sampling settings
  CeilingResult copy_ceiling;         ///< device-to-device copy ceiling
  CeilingResult read_ceiling;         ///< read-only streaming ceiling
  LaunchFloor launch_floor;           ///< an empty launch, timed the same way
  std::vector<std::string> variants;  ///< benchmarked variants, in order
  std::vector<ShapeResult> shapes;    ///< per shape, per variant results

  /// The unit the report belongs to: `unit`, or `family` when that is empty.
  const std::string& unit_name() const { return unit.empty() ? family : unit; }
  /// The ceiling the family is judged against: copy for the copy kernels, read for attention.
  const CeilingResult& family_ceiling() const;
  /// Throws ReportError (prefixed with `origin`, naming the result and the field) when fields
  /// are inconsistent: unknown family, a shape of another family, a label or group other than
  /// the one the shape's parameters give (t<T>, mha_b<B>_c<C>, gqa_b<B>_c<C>), a result for a
  /// variant not in `variants` or twice for one variant; for every measured ("ok") result and
  /// ceiling: samples and times not positive, quartiles out of order (min <= q1 <= median <=
  /// q3 <= max, mean within [min, max]), noise other than (q3 - q1) / median, or GB/s other
  /// than the declared bytes over the median time (within rounding: 1e-6 relative or 0.005);
  /// for every measured result a ceiling share other than GB/s over the family's ceiling (0
  /// without one) or an `above_ceiling` flag other than share > kCeilingTolerance; method
  /// settings out of range (negative noise target or warmup, no samples, no timeout); a measured
  /// launch floor whose samples or quartiles are inconsistent like a result's.
  void validate(const std::string& origin) const;
};

/// Throws ReportError naming `origin` unless the report holds a measurement of each of its
/// variants: at least one shape, one variant, and for every variant a result with status ok.
/// Recording refuses reports that would otherwise pass as evidence with nothing measured.
void require_measurements(const BenchReport& report, const std::string& origin);

/// The report with only the variants in `keep` (in the report's order), as recorded for an
/// evidence unit that holds some of a run's variants.
BenchReport select_variants(const BenchReport& report, const std::vector<std::string>& keep);

/// The report as JSON.
nlohmann::json to_json(const BenchReport& report);
/// Parses a report; throws ReportError naming `origin` and the missing or bad field.
BenchReport report_from_json(const nlohmann::json& json, const std::string& origin);
/// Reads a report file; throws ReportError naming the path when unreadable or corrupt.
BenchReport read_report(const std::string& path);
/// Writes the report as pretty JSON through a temporary file renamed into place, so a failed
/// write leaves nothing half-written. Throws std::runtime_error naming the path.
void write_report(const BenchReport& report, const std::string& path);

}  // namespace pagecheck::bench
