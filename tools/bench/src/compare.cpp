/// Row matching and verdicts of report comparisons.
#include "pagecheck/bench/compare.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "pagecheck/registry.h"

namespace pagecheck::bench {

namespace {
/// Slack for comparisons at a bound (102 / 100 - 1 is 0.02000000000000002 in doubles).
constexpr double kBoundSlack = 1e-9;
}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kSame:
      return "same";
    case Verdict::kUnavailable:
      return "n/a";
  }
  return "n/a";
}

Verdict classify(double old_median, double old_noise, double new_median, double new_noise) {
  if (!(old_median > 0) || !(new_median > 0)) return Verdict::kUnavailable;
  const double change = new_median / old_median - 1.0;
  const double noise = std::max(old_noise, new_noise);
  if (std::fabs(change) <= noise + kBoundSlack) return Verdict::kSame;
  return change > 0 ? Verdict::kSlower : Verdict::kFaster;
}

int Comparison::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(),
                                        [&](const CompareRow& r) { return r.verdict == verdict; }));
}

int Comparison::regressions() const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.regression; }));
}

int Comparison::missing() const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.missing; }));
}

int Comparison::exit_code() const {
  return regressions() > 0 || missing_fails() ? 1 : 0;
}

namespace {

std::string side_note(const char* side, const VariantResult* v) {
  if (v == nullptr) return std::string(side) + ": not measured";
  std::string note = std::string(side) + ": " + status_name(v->status);
  if (!v->message.empty()) note += " (" + v->message + ")";
  return note;
}

CompareRow make_row(const std::string& shape, const std::string& old_variant,
                    const VariantResult* old_v, const std::string& new_variant,
                    const VariantResult* new_v, double threshold) {
  CompareRow row;
  row.shape = shape;
  row.old_variant = old_variant;
  row.new_variant = new_variant;
  const bool old_ok = old_v != nullptr && old_v->status == RunStatus::kOk;
  const bool new_ok = new_v != nullptr && new_v->status == RunStatus::kOk;
  if (old_v != nullptr) {
    row.old_time = old_v->time_us;
    row.old_gbps = old_v->gbps;
  }
  if (new_v != nullptr) {
    row.new_time = new_v->time_us;
    row.new_gbps = new_v->gbps;
  }
  row.missing = old_v == nullptr || new_v == nullptr;
  if (!old_ok || !new_ok) {
    if (!old_ok) row.note = side_note("old", old_v);
    if (!new_ok) row.note += (row.note.empty() ? "" : "; ") + side_note("new", new_v);
    // A variant that measured before and fails now is a regression; unsupported is not.
    row.regression = old_ok && new_v != nullptr && new_v->status == RunStatus::kFailed;
    return row;
  }
  row.speedup = row.old_time.median / row.new_time.median;
  row.verdict =
      classify(row.old_time.median, row.old_time.noise, row.new_time.median, row.new_time.noise);
  const double slowdown = row.new_time.median / row.old_time.median - 1.0;
  row.regression = row.verdict == Verdict::kSlower && slowdown > threshold + kBoundSlack;
  return row;
}

void check_threshold(double threshold) {
  if (!(threshold >= 0) || !std::isfinite(threshold)) {
    throw ReportError("--threshold must be a non-negative number, got " +
                      std::to_string(threshold));
  }
}

std::string short_hash(const std::string& hash) {
  return hash.substr(0, 12);
}

/// Throws ReportError when one label names two different problems in `a` (old) and `b` (new).
void require_same_shape(const BenchShape& a, const BenchShape& b) {
  const auto differ = [&](const char* field, const std::string& x, const std::string& y) {
    if (x == y) return;
    throw ReportError("shape '" + a.label + "' is not the same problem in both reports: " + field +
                      " " + x + " (old) vs " + y + " (new); compare reports of one sweep");
  };
  differ("family", family_name(a.family), family_name(b.family));
  differ("dtype", dtype_name(a.dtype), dtype_name(b.dtype));
  differ("group", a.group, b.group);
  const std::pair<const char*, int64_t BenchShape::*> sizes[] = {
      {"num_tokens", &BenchShape::num_tokens},     {"num_seqs", &BenchShape::num_seqs},
      {"context_len", &BenchShape::context_len},   {"num_heads", &BenchShape::num_heads},
      {"num_kv_heads", &BenchShape::num_kv_heads}, {"head_size", &BenchShape::head_size},
      {"block_size", &BenchShape::block_size},     {"num_blocks", &BenchShape::num_blocks}};
  for (const auto& [field, member] : sizes) {
    differ(field, std::to_string(a.*member), std::to_string(b.*member));
  }
}

}  // namespace

Comparison compare_reports(const BenchReport& old_r, const BenchReport& new_r, double threshold) {
  check_threshold(threshold);
  if (old_r.family != new_r.family) {
    throw ReportError("cannot compare a " + old_r.family + " report with a " + new_r.family +
                      " report");
  }
  Comparison c;
  c.threshold = threshold;
  c.old_label = "old";
  c.new_label = "new";
  c.title = old_r.family + ": old (" + short_hash(old_r.source_hash) + ", " +
            old_r.environment.device + ") -> new (" + short_hash(new_r.source_hash) + ", " +
            new_r.environment.device + ")";
  if (old_r.environment.device != new_r.environment.device) {
    c.warnings.push_back("measured on different devices: '" + old_r.environment.device + "' vs '" +
                         new_r.environment.device + "'");
  }
  if (old_r.sweep != new_r.sweep) {
    c.warnings.push_back("different sweeps: '" + old_r.sweep + "' vs '" + new_r.sweep + "'");
  }
  auto find_shape = [](const BenchReport& r, const std::string& label) -> const ShapeResult* {
    for (const auto& s : r.shapes) {
      if (s.shape.label == label) return &s;
    }
    return nullptr;
  };
  // Variants in old order, then variants only in new.
  std::vector<std::string> variants = old_r.variants;
  for (const auto& v : new_r.variants) {
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
  }
  std::vector<std::string> labels;
  for (const auto& s : old_r.shapes) labels.push_back(s.shape.label);
  for (const auto& s : new_r.shapes) {
    if (std::find(labels.begin(), labels.end(), s.shape.label) == labels.end()) {
      labels.push_back(s.shape.label);
    }
  }
  for (const auto& variant : variants) {
    for (const auto& label : labels) {
      const ShapeResult* os = find_shape(old_r, label);
      const ShapeResult* ns = find_shape(new_r, label);
      if (os != nullptr && ns != nullptr) require_same_shape(os->shape, ns->shape);
      const VariantResult* ov = os ? os->find(variant) : nullptr;
      const VariantResult* nv = ns ? ns->find(variant) : nullptr;
      if (ov == nullptr && nv == nullptr) continue;
      c.rows.push_back(make_row(label, variant, ov, variant, nv, threshold));
    }
  }
  return c;
}

Comparison compare_variants(const BenchReport& r, const std::string& baseline,
                            const std::string& candidate, double threshold) {
  check_threshold(threshold);
  for (const auto& v : {baseline, candidate}) {
    if (std::find(r.variants.begin(), r.variants.end(), v) == r.variants.end()) {
      std::string known;
      for (const auto& k : r.variants) known += (known.empty() ? "" : ", ") + k;
      throw ReportError("the " + r.family + " report has no variant '" + v + "' (it has: " + known +
                        ")");
    }
  }
  Comparison c;
  c.threshold = threshold;
  c.old_label = baseline;
  c.new_label = candidate;
  c.title = r.family + ": " + baseline + " -> " + candidate + " (" + short_hash(r.source_hash) +
            ", " + r.environment.device + ")";
  for (const auto& s : r.shapes) {
    c.rows.push_back(make_row(s.shape.label, baseline, s.find(baseline), candidate,
                              s.find(candidate), threshold));
  }
  return c;
}

}  // namespace pagecheck::bench

namespace pagecheck::bench {

Comparison side_by_side(const BenchReport& report, const std::string& baseline,
                        const std::string& candidate) {
  Comparison c = compare_variants(report, baseline, candidate, 0.0);
  c.gated = false;
  for (auto& row : c.rows) row.regression = false;
  return c;
}

}  // namespace pagecheck::bench
