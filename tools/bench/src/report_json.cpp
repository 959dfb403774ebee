/// The report model and its JSON writing (reading is in report_read.cpp, checks in
/// report_validate.cpp).
#include <unistd.h>
#include <cstdio>
#include <filesystem>

#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"
#include "pagecheck/verify/atomic_file.h"

namespace pagecheck::bench {

using nlohmann::json;

namespace {

json summary_json(const SampleSummary& s) {
  return {{"samples", s.samples}, {"median", s.median}, {"q1", s.q1},     {"q3", s.q3},
          {"min", s.min},         {"max", s.max},       {"mean", s.mean}, {"noise", s.noise}};
}

json shape_json(const BenchShape& s) {
  json j = {{"family", family_name(s.family)},
            {"label", s.label},
            {"group", s.group},
            {"dtype", dtype_name(s.dtype)},
            {"num_tokens", s.num_tokens},
            {"num_seqs", s.num_seqs},
            {"context_len", s.context_len},
            {"num_heads", s.num_heads},
            {"num_kv_heads", s.num_kv_heads},
            {"head_size", s.head_size},
            {"block_size", s.block_size},
            {"num_blocks", s.num_blocks}};
  // Written only when not the default, so reports of x-split decode shapes keep their form.
  if (s.cache_kind != ref::CacheKind::kXSplit) j["cache_kind"] = cache_kind_name(s.cache_kind);
  if (s.kv_dtype) j["kv_dtype"] = dtype_name(*s.kv_dtype);
  if (s.window != 0) j["window"] = s.window;
  if (s.query_len != 1) j["query_len"] = s.query_len;
  return j;
}

json ceiling_json(const CeilingResult& c) {
  return {{"kind", c.kind},
          {"method", c.method},
          {"bytes", c.bytes},
          {"time_us", summary_json(c.time_us)},
          {"gbps", c.gbps}};
}

json floor_json(const LaunchFloor& f) {
  return {{"method", f.method}, {"time_us", summary_json(f.time_us)}};
}

}  // namespace

const char* status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kUnsupported:
      return "unsupported";
    case RunStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

const VariantResult* ShapeResult::find(const std::string& variant) const {
  for (const auto& v : variants) {
    if (v.variant == variant) return &v;
  }
  return nullptr;
}

const CeilingResult& BenchReport::family_ceiling() const {
  return family == "paged_attention" ? read_ceiling : copy_ceiling;
}

json to_json(const BenchReport& r) {
  const Environment& e = r.environment;
  const MethodSettings& m = r.method;
  json shapes = json::array();
  for (const auto& sr : r.shapes) {
    json vars = json::array();
    for (const auto& v : sr.variants) {
      vars.push_back({{"variant", v.variant},
                      {"status", status_name(v.status)},
                      {"message", v.message},
                      {"time_us", summary_json(v.time_us)},
                      {"gbps", v.gbps},
                      {"ceiling_share", v.ceiling_share},
                      {"above_ceiling", v.above_ceiling},
                      {"converged", v.converged}});
    }
    shapes.push_back({{"shape", shape_json(sr.shape)},
                      {"bytes_read", sr.bytes.read},
                      {"bytes_written", sr.bytes.written},
                      {"variants", vars}});
  }
  json out = {{"schema", r.schema},
              {"sweep", r.sweep},
              {"environment",
               {{"device", e.device},
                {"compute_capability", e.compute_capability},
                {"sm_count", e.sm_count},
                {"l2_bytes", e.l2_bytes},
                {"memory_bytes", e.memory_bytes},
                {"pci_bus_id", e.pci_bus_id},
                {"driver_version", e.driver_version},
                {"cuda_driver_version", e.cuda_driver_version},
                {"cuda_runtime_version", e.cuda_runtime_version},
                {"sm_clock_mhz", e.sm_clock_mhz},
                {"mem_clock_mhz", e.mem_clock_mhz},
                {"max_sm_clock_mhz", e.max_sm_clock_mhz},
                {"max_mem_clock_mhz", e.max_mem_clock_mhz},
                {"clock_source", e.clock_source}}},
              {"method",
               {{"timing", m.timing},
                {"l2_flush_bytes", m.l2_flush_bytes},
                {"warmup", m.warmup},
                {"min_samples", m.min_samples},
                {"max_samples", m.max_samples},
                {"max_noise", m.max_noise},
                {"timeout_s", m.timeout_s},
                {"seed", m.seed}}},
              {"ceilings",
               {{"copy", ceiling_json(r.copy_ceiling)}, {"read", ceiling_json(r.read_ceiling)}}},
              {"variants", r.variants},
              {"results", shapes}};
  if (r.launch_floor.measured()) out["launch_floor"] = floor_json(r.launch_floor);
  identity_fields::write(r, out);
  return out;
}

void write_report(const BenchReport& report, const std::string& path) {
  report.validate(path);
  verify::write_file_atomically(path, to_json(report).dump(2) + "\n");
}

}  // namespace pagecheck::bench
