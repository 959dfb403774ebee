#pragma once
/// Failure artefacts: an HDF5 file (written with verify/golden's exact, conversion-free writer)
/// holding the spec, the reproduce value (the spec JSON), every input, the reference's output
/// and the kernel's output, so `pagecheck verify --reproduce FILE` can replay the case and the
/// file can seed a new golden fixture. Caches over 2^31 elements are not stored (the spec
/// re-materializes them).
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/check/case_result.h"

namespace pagecheck::verify::check {

/// Schema name stored in the root attribute artifact_schema.
inline constexpr const char* kArtifactSchema = "pagecheck.verify.failure/1";

/// What a failing case leaves behind (pointers to the run's own data).
struct ArtifactContents {
  const CaseRequest* request = nullptr;  ///< variant, registry, spec, reproduce string
  const CaseResult* result = nullptr;    ///< outcome and message
  // paged_attention
  const ref::PagedAttentionProblem* attention = nullptr;  ///< inputs
  const ref::PagedAttentionResult* reference = nullptr;   ///< float64 reference
  const std::vector<double>* tolerance = nullptr;         ///< per-element tolerance
  const std::vector<std::byte>* actual_out = nullptr;     ///< kernel output, packed
  // copies
  const ref::CacheCopyProblem* copy_inputs = nullptr;     ///< inputs (initial buffers)
  const ref::CacheCopyProblem* copy_expected = nullptr;   ///< after the reference
  const std::vector<std::byte>* actual_first = nullptr;   ///< kernel key_out / key_cache
  const std::vector<std::byte>* actual_second = nullptr;  ///< kernel value_out / value_cache
  // the determinism re-run, when its outputs differ from the first run's
  const std::vector<std::byte>* second_run_out = nullptr;     ///< attention output, packed
  const std::vector<std::byte>* second_run_first = nullptr;   ///< key_out / key_cache
  const std::vector<std::byte>* second_run_second = nullptr;  ///< value_out / value_cache
};

/// Writes the artefact to `path` (through a temporary file renamed into place). Throws
/// std::runtime_error naming the path on failure.
void write_artifact(const std::string& path, const ArtifactContents& contents);

/// An artefact read back.
struct LoadedArtifact {
  std::string registry;        ///< registry of the variant
  std::string variant;         ///< variant name
  gen::CaseSpec spec;          ///< the case
  std::string reproduce;       ///< reproduce value: the spec JSON ("" if none)
  std::string outcome;         ///< outcome when it was written
  std::string message;         ///< message when it was written
  bool tensors_stored = true;  ///< false for large caches (inputs come from the spec)
  std::optional<ref::PagedAttentionProblem> attention;  ///< inputs (attention)
  std::optional<ref::CacheCopyProblem> copy;            ///< inputs (copies)
};

/// Reads an artefact; throws std::invalid_argument naming the file and dataset when it is
/// missing, not an artefact, or inconsistent with its spec.
LoadedArtifact read_artifact(const std::string& path);

/// Checks an artefact without running anything (and without re-materializing large caches):
/// the errors of read_artifact (std::invalid_argument naming the file and what is wrong).
void check_artifact(const std::string& path);

}  // namespace pagecheck::verify::check
