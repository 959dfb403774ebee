/// Reading reports from JSON, field by field, with errors naming the file and the field.
#include <cmath>

#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/bench/json_fields.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/registry.h"

namespace pagecheck::bench {

using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  json_fields::fail<ReportError>(where, what);
}
constexpr auto& field = json_fields::field<ReportError>;
constexpr auto& get_string = json_fields::get_string<ReportError>;
constexpr auto& get_number = json_fields::get_number<ReportError>;
constexpr auto& get_bool = json_fields::get_bool<ReportError>;
constexpr auto& get_array = json_fields::get_array<ReportError>;
int64_t get_int(const json& j, const char* key, const std::string& where) {
  return json_fields::get_int<ReportError>(j, key, where);
}

SampleSummary summary_from(const json& j, const std::string& where) {
  SampleSummary s;
  s.samples = get_int(j, "samples", where);
  s.median = get_number(j, "median", where);
  s.q1 = get_number(j, "q1", where);
  s.q3 = get_number(j, "q3", where);
  s.min = get_number(j, "min", where);
  s.max = get_number(j, "max", where);
  s.mean = get_number(j, "mean", where);
  s.noise = get_number(j, "noise", where);
  if (s.samples < 0) fail(where, "field 'samples' must be an integer >= 0");
  return s;  // the order of the quartiles etc. of measured results: BenchReport::validate
}

BenchShape shape_from(const json& j, const std::string& where) {
  BenchShape s;
  try {
    s.family = parse_family(get_string(j, "family", where));
    s.dtype = parse_dtype(get_string(j, "dtype", where));
  } catch (const ReportError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    fail(where, e.what());
  }
  s.label = get_string(j, "label", where);
  s.group = get_string(j, "group", where);
  s.num_tokens = get_int(j, "num_tokens", where);
  s.num_seqs = get_int(j, "num_seqs", where);
  s.context_len = get_int(j, "context_len", where);
  s.num_heads = get_int(j, "num_heads", where);
  s.num_kv_heads = get_int(j, "num_kv_heads", where);
  s.head_size = get_int(j, "head_size", where);
  s.block_size = get_int(j, "block_size", where);
  s.num_blocks = get_int(j, "num_blocks", where);
  // Optional (absent in reports of x-split decode shapes and in older reports).
  try {
    if (j.contains("cache_kind")) {
      s.cache_kind = ref::parse_cache_kind(get_string(j, "cache_kind", where).c_str());
    }
    if (j.contains("kv_dtype")) s.kv_dtype = parse_dtype(get_string(j, "kv_dtype", where));
  } catch (const ReportError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    fail(where, e.what());
  }
  if (j.contains("window")) s.window = json_fields::get_int<ReportError>(j, "window", where, 0);
  if (j.contains("query_len")) {
    s.query_len = json_fields::get_int<ReportError>(j, "query_len", where, 0);
  }
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    fail(where, e.what());
  }
  return s;
}

RunStatus status_from(const std::string& text, const std::string& where) {
  for (RunStatus s : {RunStatus::kOk, RunStatus::kUnsupported, RunStatus::kFailed}) {
    if (text == status_name(s)) return s;
  }
  fail(where, "unknown status '" + text + "' (expected ok, unsupported or failed)");
}

CeilingResult ceiling_from(const json& j, const std::string& where) {
  CeilingResult c;
  c.kind = get_string(j, "kind", where);
  c.method = get_string(j, "method", where);
  c.bytes = get_int(j, "bytes", where);
  c.time_us = summary_from(field(j, "time_us", where), where + ".time_us");
  c.gbps = get_number(j, "gbps", where);
  return c;
}

}  // namespace

BenchReport report_from_json(const json& j, const std::string& origin) {
  BenchReport r;
  r.schema = get_string(j, "schema", origin);
  if (r.schema != kReportSchema) fail(origin, "schema '" + r.schema + "' is not " + kReportSchema);
  identity_fields::read<ReportError>(j, origin, r);
  r.sweep = get_string(j, "sweep", origin);

  const std::string ew = origin + ": environment";
  const json& env = field(j, "environment", origin);
  Environment& e = r.environment;
  e.device = get_string(env, "device", ew);
  e.compute_capability = get_string(env, "compute_capability", ew);
  e.sm_count = get_int(env, "sm_count", ew);
  e.l2_bytes = get_int(env, "l2_bytes", ew);
  e.memory_bytes = get_int(env, "memory_bytes", ew);
  e.pci_bus_id = get_string(env, "pci_bus_id", ew);
  e.driver_version = get_string(env, "driver_version", ew);
  e.cuda_driver_version = get_string(env, "cuda_driver_version", ew);
  e.cuda_runtime_version = get_string(env, "cuda_runtime_version", ew);
  e.sm_clock_mhz = get_int(env, "sm_clock_mhz", ew);
  e.mem_clock_mhz = get_int(env, "mem_clock_mhz", ew);
  e.max_sm_clock_mhz = get_int(env, "max_sm_clock_mhz", ew);
  e.max_mem_clock_mhz = get_int(env, "max_mem_clock_mhz", ew);
  e.clock_source = get_string(env, "clock_source", ew);

  const std::string mw = origin + ": method";
  const json& meth = field(j, "method", origin);
  MethodSettings& m = r.method;
  m.timing = get_string(meth, "timing", mw);
  m.l2_flush_bytes = get_int(meth, "l2_flush_bytes", mw);
  m.warmup = get_int(meth, "warmup", mw);
  m.min_samples = get_int(meth, "min_samples", mw);
  m.max_samples = get_int(meth, "max_samples", mw);
  m.max_noise = get_number(meth, "max_noise", mw);
  m.timeout_s = get_number(meth, "timeout_s", mw);
  const json& seed = field(meth, "seed", mw);
  if (!seed.is_number_unsigned() && !seed.is_number_integer())
    fail(mw, "field 'seed' must be an integer");
  m.seed = seed.get<uint64_t>();

  const json& ceil = field(j, "ceilings", origin);
  r.copy_ceiling =
      ceiling_from(field(ceil, "copy", origin + ": ceilings"), origin + ": ceilings.copy");
  r.read_ceiling =
      ceiling_from(field(ceil, "read", origin + ": ceilings"), origin + ": ceilings.read");

  if (j.contains("launch_floor")) {  // reports from before the floor have none
    const std::string fw = origin + ": launch_floor";
    const json& fj = field(j, "launch_floor", origin);
    r.launch_floor.method = get_string(fj, "method", fw);
    r.launch_floor.time_us = summary_from(field(fj, "time_us", fw), fw + ".time_us");
    if (!r.launch_floor.measured()) fail(fw + ".time_us", "field 'samples' must be positive");
  }

  for (const auto& v : get_array(j, "variants", origin)) {
    if (!v.is_string()) fail(origin, "field 'variants' must hold strings");
    r.variants.push_back(v.get<std::string>());
  }

  const json& results = get_array(j, "results", origin);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = origin + ": results[" + std::to_string(i) + "]";
    const json& rj = results[i];
    ShapeResult sr;
    sr.shape = shape_from(field(rj, "shape", where), where + ".shape");
    sr.bytes.read = get_int(rj, "bytes_read", where);
    sr.bytes.written = get_int(rj, "bytes_written", where);
    const json& vj = get_array(rj, "variants", where);
    for (std::size_t k = 0; k < vj.size(); ++k) {
      const std::string vw = where + ".variants[" + std::to_string(k) + "]";
      VariantResult v;
      v.variant = get_string(vj[k], "variant", vw);
      v.status = status_from(get_string(vj[k], "status", vw), vw);
      v.message = get_string(vj[k], "message", vw);
      v.time_us = summary_from(field(vj[k], "time_us", vw), vw + ".time_us");
      v.gbps = get_number(vj[k], "gbps", vw);
      v.ceiling_share = get_number(vj[k], "ceiling_share", vw);
      v.above_ceiling = get_bool(vj[k], "above_ceiling", vw);
      v.converged = get_bool(vj[k], "converged", vw);
      sr.variants.push_back(std::move(v));
    }
    r.shapes.push_back(std::move(sr));
  }
  r.validate(origin);
  return r;
}

BenchReport read_report(const std::string& path) {
  return report_from_json(json_fields::read_file<ReportError>(path, "bandwidth report"), path);
}

}  // namespace pagecheck::bench
