/// Every kernel variant against every golden, with the run functions injected: listing,
/// loading, capability skips, comparison and the report. No CUDA here (device_verify.cpp binds
/// the GPU runner), so the CPU tests drive all of it with fake runners.
#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <ostream>
#include <utility>

#include "golden_caps.h"
#include "manifest.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/golden.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify::golden {
namespace {

/// A golden's float64 attention output as a reference result, with the per-element tolerance
/// of each declared precision model (verify/tolerance: attention_tolerance, the one tolerance
/// call) computed on the first comparison under that model: it depends on the golden and the
/// declaration only, so variants declaring the same model share it.
class AttentionExpectation {
 public:
  explicit AttentionExpectation(const LoadedGolden& g) : g_(g) {
    const ref::PagedAttentionProblem& p = g.attention;
    expected_.num_rows = p.batch.num_query_tokens();
    expected_.num_heads = p.num_heads;
    expected_.head_size = p.head_size();
    expected_.out = g.expected_out_f64;
    expected_.lse = g.expected_lse;
  }

  /// "" when every element of `out` is within the tolerance of the golden's output under the
  /// precision `variant` declares, otherwise the comparison's description.
  std::string compare(const VariantInfo& variant, const std::vector<std::byte>& out) {
    const std::size_t want_bytes = expected_.out.size() * dtype_size(g_.attention.dtype);
    if (out.size() != want_bytes) {
      return "output has " + std::to_string(out.size()) + " bytes, expected " +
             std::to_string(want_bytes);
    }
    ToleranceModel model;
    model.precision = from_abi(variant.variant.precision);
    const std::vector<double>* tolerance = nullptr;
    for (const auto& [precision, values] : tolerances_) {
      if (precision == model.precision) tolerance = &values;
    }
    if (tolerance == nullptr) {
      tolerances_.emplace_back(model.precision,
                               attention_tolerance(g_.attention, expected_, model));
      tolerance = &tolerances_.back().second;
    }
    const AttentionComparison c = compare_attention(g_.attention, expected_, *tolerance, out);
    return c.passed() ? "" : c.describe();
  }

 private:
  const LoadedGolden& g_;
  ref::PagedAttentionResult expected_;
  std::deque<std::pair<PrecisionModel, std::vector<double>>> tolerances_;
};

/// "" when `got` equals `want` byte for byte, otherwise how many elements differ and where.
std::string compare_bytes(const char* what, const std::vector<std::byte>& want,
                          const std::vector<std::byte>& got, std::size_t element) {
  if (want.size() != got.size()) {
    return std::string(what) + ": " + std::to_string(got.size()) + " bytes, expected " +
           std::to_string(want.size());
  }
  int64_t differing = 0;
  int64_t first = -1;
  for (std::size_t i = 0; i < want.size(); i += element) {
    if (std::memcmp(want.data() + i, got.data() + i, std::min(element, want.size() - i)) != 0) {
      if (first < 0) first = static_cast<int64_t>(i / element);
      ++differing;
    }
  }
  if (differing == 0) return "";
  return std::string(what) + ": " + std::to_string(differing) + " elements differ, first at " +
         std::to_string(first);
}

/// Appends `part` to `text` with "; " between non-empty parts.
void append(std::string& text, const std::string& part) {
  if (part.empty()) return;
  text += (text.empty() ? "" : "; ") + part;
}

/// Verdict of one (golden, variant) run.
struct RunVerdict {
  bool skipped = false;  ///< not run (the variant refused the problem)
  std::string detail;    ///< skip reason or mismatch; "" when passed
  bool sticky = false;   ///< the device is unusable after this run
};

/// Runs `variant` on `g` through `runner` and compares its outputs with the golden's
/// (`attention`: the expectation of an attention golden `g`).
RunVerdict run_one(const GoldenRunner& runner, const VariantInfo& variant, const LoadedGolden& g,
                   AttentionExpectation& attention) {
  RunVerdict v;
  DeviceRunOutcome outcome;
  std::string mismatch;
  try {
    if (g.family == PC_FAMILY_PAGED_ATTENTION) {
      AttentionRun run = runner.paged_attention(variant, g.attention);
      outcome = run.outcome;
      if (outcome.disposition == LaunchDisposition::kLaunched) {
        mismatch = attention.compare(variant, run.out);
      }
    } else {
      const bool gather = g.family == PC_FAMILY_GATHER_CACHED_KV;
      CopyRun run = gather ? runner.gather_cached_kv(variant, g.copy)
                           : runner.reshape_and_cache(variant, g.copy);
      outcome = run.outcome;
      const std::size_t element = dtype_size(g.dtype);
      if (outcome.disposition == LaunchDisposition::kLaunched) {
        mismatch =
            compare_bytes(gather ? "key" : "key_cache", g.expected_first, run.first, element);
        append(mismatch, compare_bytes(gather ? "value" : "value_cache", g.expected_second,
                                       run.second, element));
      }
    }
  } catch (const std::exception& e) {
    v.detail = std::string("run threw: ") + e.what();
    v.sticky = true;
    return v;
  }
  if (outcome.disposition == LaunchDisposition::kNotSupported) {
    v.skipped = true;
    v.detail = "variant refused: " + outcome.message;
    return v;
  }
  if (outcome.disposition == LaunchDisposition::kInvalid) {
    mismatch = "variant called the arguments invalid: " + outcome.message;
  } else if (outcome.disposition != LaunchDisposition::kLaunched) {
    mismatch = "launch failed: " + outcome.message;
  }
  if (!outcome.guards_intact) append(mismatch, "guard zone: " + outcome.guard_report);
  v.detail = mismatch;
  v.sticky = outcome.sticky_error;
  return v;
}

}  // namespace

int verify_goldens_with(const VariantRegistry& registry, const std::string& dir,
                        const GoldenRunner& runner, std::ostream& out, GoldenTally* tally) {
  GoldenTally t;
  t.listed = static_cast<int64_t>(read_manifest(dir).at("cases").size());
  std::vector<LoadedGolden> goldens;
  for (const std::string& path : list_goldens(dir)) goldens.push_back(load_golden(path));
  t.loaded = static_cast<int64_t>(goldens.size());
  out << t.loaded << " of " << t.listed << " goldens loaded from " << dir << "\n" << std::flush;
  bool sticky = false;
  for (const LoadedGolden& g : goldens) {
    std::string verdicts;
    std::string failures;
    int64_t ran = 0, failed = 0;
    AttentionExpectation attention(g);
    for (const VariantInfo* variant : registry.family(g.family)) {
      std::string why = unsupported_reason(*variant, g);
      RunVerdict v;
      if (why.empty()) v = run_one(runner, *variant, g, attention);
      if (!why.empty() || v.skipped) {
        verdicts += " " + variant->name + " skip (" + (why.empty() ? v.detail : why) + ")";
        ++t.skipped;
      } else if (v.detail.empty()) {
        verdicts += " " + variant->name + " ok";
        ++ran, ++t.passed;
      } else {
        verdicts += " " + variant->name + " FAIL";
        failures += "  FAIL " + g.name + " / " + variant->name + ": " + v.detail + "\n";
        ++ran, ++failed, ++t.failed;
      }
      if (v.sticky) {
        sticky = true;
        break;
      }
    }
    if (ran > 0) ++t.goldens_run;
    const char* status = failed > 0 ? "FAIL" : ran > 0 ? "ok  " : "skip";
    out << status << " " << g.name << " (" << family_name(g.family) << " " << dtype_name(g.dtype)
        << "):" << (verdicts.empty() ? " no variant of the family" : verdicts) << "\n"
        << failures << std::flush;
    if (sticky) {
      out << "the CUDA context is unusable after " << g.name << "; stopping\n";
      break;
    }
  }
  out << t.goldens_run << " of " << t.listed << " goldens run; " << t.passed << " passed, "
      << t.failed << " failed, " << t.skipped << " skipped\n";
  int code = t.failed > 0 ? 1 : 0;
  if (t.listed > 0 && (t.loaded != t.listed || t.goldens_run == 0)) {
    out << "FAIL: " << dir << "/" << kManifestName << " lists " << t.listed << " cases but "
        << t.loaded << " were loaded and " << t.goldens_run << " run\n";
    code = 1;
  }
  out << std::flush;
  if (tally != nullptr) *tally = t;
  return sticky ? 3 : code;
}

}  // namespace pagecheck::verify::golden
