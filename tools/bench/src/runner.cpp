/// The bench run: ceilings, then each shape's inputs, output check and cold timing per variant.
#include "pagecheck/bench/runner.h"

#include <algorithm>
#include <ostream>

#include "ceilings.h"
#include "cold_timer.h"
#include "device_problem.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/cuda_check.h"
#include "pagecheck/cuda_device_info.h"

namespace pagecheck::bench {

using detail::ColdTimer;
using detail::DeviceBuffer;
using detail::DeviceProblem;
using detail::MeasureError;
using detail::MeasureSettings;

namespace {

const char* pc_status_name(pc_status s) {
  switch (s) {
    case PC_STATUS_OK:
      return "ok";
    case PC_STATUS_UNSUPPORTED:
      return "unsupported";
    case PC_STATUS_INVALID_ARGUMENT:
      return "invalid argument";
    case PC_STATUS_CUDA_ERROR:
      return "CUDA error";
    case PC_STATUS_INTERNAL_ERROR:
      return "internal error";
  }
  return "unknown status";
}

/// Thrown by a launch that returned PC_STATUS_UNSUPPORTED.
struct Unsupported : MeasureError {
  using MeasureError::MeasureError;
};

/// After a CudaError: true when the context still works (the error was not sticky).
bool context_usable() {
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
}

VariantResult unsupported(const std::string& name, const std::string& why) {
  VariantResult v;
  v.variant = name;
  v.status = RunStatus::kUnsupported;
  v.message = why;
  return v;
}

VariantResult failed(const std::string& name, const std::string& why) {
  VariantResult v;
  v.variant = name;
  v.status = RunStatus::kFailed;
  v.message = why;
  return v;
}

/// What of the shape's layout, KV dtype, window and query length the variant does not declare
/// ("" when it declares all of it): such rows run only on variants that declare them.
std::string undeclared_feature(const VariantInfo& info, const BenchShape& shape) {
  const auto dtype = static_cast<pc_dtype>(shape.dtype);
  const auto kv = static_cast<pc_dtype>(shape.cache_dtype());
  if (!info.supports_cache_kind(static_cast<pc_cache_kind>(shape.cache_kind))) {
    return std::string(ref::cache_kind_name(shape.cache_kind)) + " cache";
  }
  if (!info.supports_kv_dtype(dtype, kv)) {
    return std::string(dtype_name(shape.cache_dtype())) + " cache with " + dtype_name(shape.dtype) +
           " tokens";
  }
  if (kv != dtype && !info.supports_scale_kind(PC_SCALE_PER_TENSOR)) return "per-tensor scales";
  if (kv != dtype && shape.family == PC_FAMILY_GATHER_CACHED_KV &&
      !info.has_caps(PC_CAP_DEQUANTIZE)) {
    return "dequantize";
  }
  if (shape.window > 0 && !info.has_caps(PC_CAP_WINDOW)) return "sliding window";
  if (shape.query_len > info.max_query_len()) {
    return "query length " + std::to_string(shape.query_len) + " (max_query_len " +
           std::to_string(info.max_query_len()) + ")";
  }
  return "";
}

VariantResult run_variant(const VariantInfo& info, const pc_device_info& device,
                          const ShapeResult& sr, DeviceProblem& problem, ColdTimer& timer,
                          cudaStream_t stream, const MeasureSettings& settings,
                          const CeilingResult& ceiling, double tolerance) {
  const BenchShape& shape = sr.shape;
  if (!info.supports(static_cast<pc_dtype>(shape.dtype), shape.head_size, shape.block_size)) {
    return unsupported(info.name, std::string("declares no support for ") +
                                      dtype_name(shape.dtype) + ", head size " +
                                      std::to_string(shape.head_size) + ", block size " +
                                      std::to_string(shape.block_size));
  }
  const std::string undeclared = undeclared_feature(info, shape);
  if (!undeclared.empty()) return unsupported(info.name, "declares no " + undeclared);
  const void* args = problem.args();
  std::string msg;
  {
    const pc_status st = info.can_implement(device, args, &msg);
    if (st == PC_STATUS_UNSUPPORTED) return unsupported(info.name, msg);
    if (st != PC_STATUS_OK) {
      return failed(info.name, std::string("can_implement: ") + pc_status_name(st) + ": " + msg);
    }
  }
  try {
    const std::size_t ws = info.workspace_bytes(device, args);
    DeviceBuffer workspace(ws);
    auto launch = [&](cudaStream_t s) {
      const pc_status st = info.launch(device, args, workspace.get(), s, &msg);
      if (st == PC_STATUS_UNSUPPORTED) throw Unsupported(msg);
      if (st != PC_STATUS_OK) {
        throw MeasureError(std::string("launch: ") + pc_status_name(st) + ": " + msg);
      }
    };
    problem.poison_outputs(stream);
    launch(stream);
    PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::string wrong = problem.check_outputs(stream);
    if (!wrong.empty()) return failed(info.name, "output check: " + wrong);

    const detail::Measurement m = timer.measure(launch, settings);
    VariantResult v;
    v.variant = info.name;
    v.time_us = m.time_us;
    v.converged = m.converged;
    v.gbps = bandwidth_gbps(sr.bytes.total(), m.time_us.median);
    v.ceiling_share = ceiling.gbps > 0 ? v.gbps / ceiling.gbps : 0.0;
    v.above_ceiling = v.ceiling_share > tolerance;
    return v;
  } catch (const Unsupported& e) {
    return unsupported(info.name, std::string("launch: ") + e.what());
  } catch (const MeasureError& e) {
    if (!context_usable()) throw CudaError(cudaErrorUnknown, e.what());
    return failed(info.name, e.what());
  } catch (const CudaError& e) {
    if (!context_usable()) {
      throw CudaError(e.code, "variant '" + info.name + "' on shape '" + shape.label +
                                  "': " + e.what() + " (the CUDA context is unusable; stopping)");
    }
    return failed(info.name, e.what());
  }
}

}  // namespace

BenchReport run_bench(const VariantRegistry& registry, pc_family family,
                      const std::vector<std::string>& variants,
                      const std::vector<BenchShape>& shapes, const BenchOptions& options,
                      std::ostream* log) {
  options.validate();
  std::vector<const VariantInfo*> infos;
  for (const auto& name : variants) {
    const VariantInfo* info = registry.find(family, name);
    if (info == nullptr) {
      std::string known;
      for (const auto* v : registry.family(family)) known += (known.empty() ? "" : ", ") + v->name;
      throw std::invalid_argument("--variants: no " + std::string(family_name(family)) +
                                  " variant '" + name +
                                  "' (registered: " + (known.empty() ? "none" : known) + ")");
    }
    infos.push_back(info);
  }
  for (const auto& s : shapes) {
    if (s.family != family) {
      throw std::invalid_argument("shape '" + s.label + "' is not a " +
                                  std::string(family_name(family)) + " shape");
    }
  }
  if (!bench_device_available(nullptr)) {
    std::string why;
    bench_device_available(&why);
    throw CudaError(cudaErrorNoDevice, "pagecheck bench needs a GPU: " + why);
  }
  PAGECHECK_CUDA_CHECK(cudaSetDevice(options.device));
  const pc_device_info device = query_device_info(options.device);  // once per run (one device)

  BenchReport r;
  r.family = family_name(family);
  r.environment = query_environment(options.device);
  r.variants = variants;
  const MeasureSettings settings{options.warmup, options.min_samples, options.max_samples,
                                 options.max_noise, options.timeout_s};
  detail::Stream stream;
  const int64_t flush_bytes = std::max<int64_t>(2 * r.environment.l2_bytes, 32ll << 20);
  ColdTimer timer(flush_bytes, stream.get());
  r.method.l2_flush_bytes = timer.flush_bytes();
  r.method.warmup = options.warmup;
  r.method.min_samples = options.min_samples;
  r.method.max_samples = options.max_samples;
  r.method.max_noise = options.max_noise;
  r.method.timeout_s = options.timeout_s;
  r.method.seed = options.seed;

  if (log) *log << "device: " << r.environment.device << " (" << r.environment.pci_bus_id << ")\n";
  r.copy_ceiling = detail::measure_copy_ceiling(timer, options.ceiling_bytes,
                                                static_cast<int>(r.environment.sm_count), settings,
                                                stream.get(), options.seed);
  r.read_ceiling = detail::measure_read_ceiling(timer, options.ceiling_bytes,
                                                static_cast<int>(r.environment.sm_count), settings,
                                                stream.get(), options.seed);
  r.launch_floor = detail::measure_launch_floor(timer, settings);
  if (log) {
    *log << "ceilings: copy " << format_number(r.copy_ceiling.gbps) << " GB/s, read "
         << format_number(r.read_ceiling.gbps) << " GB/s; launch floor "
         << format_number(r.launch_floor.time_us.median) << " us" << std::endl;
  }
  const CeilingResult& ceiling = r.family_ceiling();

  for (std::size_t i = 0; i < shapes.size(); ++i) {
    ShapeResult sr;
    sr.shape = shapes[i];
    sr.bytes = bytes_moved(sr.shape);
    const uint64_t shape_seed = options.seed * 0x9E3779B97F4A7C15ull + i;
    DeviceProblem problem(sr.shape, shape_seed, stream.get());
    for (const VariantInfo* info : infos) {
      VariantResult v = run_variant(*info, device, sr, problem, timer, stream.get(), settings,
                                    ceiling, options.ceiling_tolerance);
      if (log) {
        *log << "[" << (i + 1) << "/" << shapes.size() << "] " << sr.shape.label << " " << v.variant
             << ": ";
        if (v.status == RunStatus::kOk) {
          *log << format_number(v.time_us.median) << " us, " << format_number(v.gbps) << " GB/s ("
               << format_percent(v.ceiling_share) << " of " << ceiling.kind << "), noise "
               << format_percent(v.time_us.noise) << ", " << v.time_us.samples << " samples";
        }
        const std::string flags = result_flags(v, r.launch_floor);
        if (!flags.empty()) *log << (v.status == RunStatus::kOk ? "; " : "") << flags;
        *log << std::endl;
      }
      sr.variants.push_back(std::move(v));
    }
    r.shapes.push_back(std::move(sr));
  }
  return r;
}

}  // namespace pagecheck::bench
