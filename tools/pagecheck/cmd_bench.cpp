/// `pagecheck bench`: bandwidth reports of kernel families over sweeps of shapes on the GPU.
/// Its subcommands `compare` and `record` live in cmd_bench_compare.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "arg_checks.h"
#include "cmd_bench_common.h"
#include "commands.h"
#include "output_paths.h"
#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/device_compare.h"
#include "pagecheck/bench/plot.h"
#include "pagecheck/bench/process.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/bench/runner.h"
#include "pagecheck/review/build_revision.h"
#include "pagecheck/review/built_sources.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"
#include "pagecheck/review/git.h"
#include "pagecheck/review/record.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/check/devices.h"
#include "record_units.h"
#ifdef PAGECHECK_BENCH_HAVE_CUDA
#include "pagecheck/cuda_check.h"
#endif

namespace pagecheck::cli {
namespace {

namespace fs = std::filesystem;

struct BenchCliOptions {
  std::string families;
  std::vector<std::string> variants;
  bool quick = false;
  std::string shapes;
  bool list_shapes = false;
  std::string dtype = "float16";
  std::string json_path, markdown_path, plot_path;
  bool record = false;
  bool force = false;
  std::string record_dir;
  std::string repo;
  std::vector<std::string> plugins;
  bench::BenchOptions run;
  std::string devices;  ///< --devices all|0,1,... ("": the one --device)
};

/// The devices of `--devices TEXT` among the visible ones: UsageError (exit 2) for a bad list;
/// none, after a clear message, when no device is visible.
std::vector<int> bench_devices(const std::string& text) {
  int count = 0;
#ifdef PAGECHECK_BENCH_HAVE_CUDA
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
#endif
  if (count == 0) {
    std::cerr << "pagecheck bench: no GPU: --devices " << text << " found no CUDA device"
              << (builtin_kernels_available() ? "" : " (this build has no CUDA)") << "\n";
    return {};
  }
  try {
    return verify::check::parse_device_list(text, count);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

/// "all" or a comma-separated list of family names.
std::vector<pc_family> parse_families(const std::string& text) {
  if (text == "all") {
    return {std::begin(kAllFamilies), std::end(kAllFamilies)};
  }
  std::vector<pc_family> out;
  std::stringstream in(text);
  std::string name;
  while (std::getline(in, name, ',')) out.push_back(parse_family(name));
  if (out.empty()) throw UsageError("--family: no family named");
  return out;
}

/// Warns when a kernel source is newer than this executable (the binary may not contain it).
void warn_if_stale(const std::string& repo, const std::vector<std::string>& files) {
  struct stat exe {};
  if (stat("/proc/self/exe", &exe) != 0) return;
  for (const auto& f : files) {
    struct stat src {};
    if (stat((fs::path(repo) / f).c_str(), &src) == 0 && src.st_mtime > exe.st_mtime) {
      std::cerr << "pagecheck bench: warning: " << f << " is newer than this pagecheck binary; "
                << "rebuild so the measured kernels are the hashed sources\n";
    }
  }
}

/// The content hash of the family's built-in unit as this binary was built from it ("" when it
/// cannot be computed, with a warning unless `recording`). `recording`: the repository's
/// sources must hash the same (UsageError otherwise); else a difference is a warning, and the
/// report names the sources the binary was built from.
std::string source_hash(const std::string& repo, pc_family family, bool recording) {
  try {
    const auto families = review::load_family_sources(repo);
    const auto h = review::working_tree_hash(
        repo, review::find_family(families, family_name(family), review::kFamiliesFile));
    warn_if_stale(repo, h.files);
    const std::string built = review::built_source_hash(family_name(family));
    const std::string mismatch =
        review::built_sources_mismatch(family_name(family), built, h.hash, repo);
    if (mismatch.empty()) return h.hash;
    if (recording) throw UsageError("bench --record: " + mismatch);
    std::cerr << "pagecheck bench: warning: " << mismatch << " (the report names the built ones)\n";
    return built;
  } catch (const std::invalid_argument& e) {
    if (!recording) std::cerr << "pagecheck bench: warning: no source hash: " << e.what() << "\n";
    return "";
  }
}

/// Writes --json / --markdown / --plot outputs of one report.
void write_outputs(const BenchCliOptions& o, const bench::BenchReport& report) {
  std::string json = o.json_path, temp;
  if (json.empty() && !o.plot_path.empty()) {
    temp = (fs::temp_directory_path() / ("pagecheck-bench-" + std::to_string(getpid()) + ".json"))
               .string();
    json = temp;
  }
  if (!json.empty()) bench::write_report(report, json);
  if (!o.json_path.empty()) std::cerr << "wrote " << o.json_path << "\n";
  bool plotted = false;
  if (!o.plot_path.empty()) {
    std::string error;
    plotted = bench::plot_report(o.repo, json, o.plot_path, &error);
    std::cerr << (plotted ? "wrote " + o.plot_path : "pagecheck bench: warning: no plot: " + error)
              << "\n";
  }
  if (!temp.empty()) fs::remove(temp);
  if (!o.markdown_path.empty()) {
    std::string link;
    if (plotted) {
      std::error_code ec;
      const fs::path rel =
          fs::relative(fs::absolute(o.plot_path), fs::absolute(o.markdown_path).parent_path(), ec);
      link = ec ? o.plot_path : rel.generic_string();
    }
    verify::write_file_atomically(o.markdown_path, bench::render_report_markdown(report, link));
    std::cerr << "wrote " << o.markdown_path << "\n";
  }
}

/// Measures one family on device o.run.device: the report with its provenance.
bench::BenchReport measure_family(BenchCliOptions& o, const VariantRegistry& registry,
                                  pc_family family) {
  std::string sweep_name;
  const auto shapes =
      bench::sweep_for(family, o.quick, o.shapes, parse_dtype(o.dtype), &sweep_name);
  const bool recording = o.record || !o.record_dir.empty();
  if (recording && sweep_name != "default") {
    throw UsageError("--record writes reports of the built-in sweep; drop --quick/--shapes");
  }
  std::vector<std::string> variants = o.variants;
  if (variants.empty()) {
    for (const auto* v : registry.family(family)) variants.push_back(v->name);
  }
  if (variants.empty()) {
    throw std::runtime_error(
        std::string("no ") + family_name(family) + " variant is registered" +
        (builtin_kernels_available() ? "" : " (this build has no CUDA kernels)"));
  }
  const std::string hash = source_hash(o.repo, family, recording);  // recorded: per unit

  bench::BenchReport report =
      bench::run_bench(registry, family, variants, shapes, o.run, &std::cerr);
  report.tool_version = bench::tool_version();
  report.source_hash = hash.empty() ? "unknown" : hash;
  // The build's own revision (a copied tree's .git may be stale), else the repository's HEAD.
  const review::BuildRevision source = review::recording_revision(o.repo);
  report.git_revision = source.revision.empty() ? "unknown" : source.revision;
  report.git_dirty = !source.revision.empty() && source.dirty;
  report.date = review::utc_now_iso8601();
  report.sweep = sweep_name;
  return report;
}

/// Failed variant runs of a report.
int failed_runs(const bench::BenchReport& report) {
  int failed = 0;
  for (const auto& sr : report.shapes) {
    for (const auto& v : sr.variants) failed += v.status == bench::RunStatus::kFailed;
  }
  return failed;
}

/// Benchmarks one family; returns the number of failed variant runs.
int bench_family(BenchCliOptions& o, const VariantRegistry& registry, pc_family family) {
  const bench::BenchReport report = measure_family(o, registry, family);
  const bool recording = o.record || !o.record_dir.empty();
  std::cout << bench::render_report_table(report);
  for (std::size_t i = 1; i < report.variants.size(); ++i) {
    std::cout << "\n"
              << bench::render_comparison_markdown(
                     bench::side_by_side(report, report.variants[0], report.variants[i]));
  }
  write_outputs(o, report);
  if (recording) record_run_report(o.repo, o.record_dir, o.force, registry, family, report);
  const int failed = failed_runs(report);
  // Above the ceiling or below the launch floor (flagged in the report): the timing, caching
  // or byte formula is wrong.
  for (const std::string& line : bench::suspect_result_warnings(report)) {
    std::cerr << "pagecheck bench: warning: " << line << "\n";
  }
  if (failed > 0) std::cerr << "pagecheck bench: " << failed << " variant run(s) failed\n";
  return failed;
}

int run_bench_command(BenchCliOptions& o) {
  if (o.families.empty()) throw UsageError("bench: --family is required (or use a subcommand)");
  const std::vector<pc_family> families = parse_families(o.families);
  check_plugins_loadable(o.plugins);  // bad plugin: exit 2, before any GPU work
  if (o.list_shapes) {
    for (pc_family f : families) {
      for (const auto& s : bench::sweep_for(f, o.quick, o.shapes, parse_dtype(o.dtype), nullptr)) {
        std::cout << s.label << "  " << bench::describe(s) << "\n";
      }
    }
    return 0;
  }
  o.run.validate();
  if (families.size() > 1 &&
      (!o.json_path.empty() || !o.markdown_path.empty() || !o.plot_path.empty())) {
    throw UsageError("--json/--markdown/--plot take one family; use --record or --record-dir");
  }
  if ((o.record || !o.record_dir.empty()) && !o.variants.empty()) {
    throw UsageError("--record benchmarks every variant of the family; drop --variants");
  }
  if ((o.record || !o.record_dir.empty()) && o.dtype != "float16") {
    throw UsageError("--record: the recorded sweeps are float16");
  }
  check_output_file(o.json_path, "--json");
  check_output_file(o.markdown_path, "--markdown");
  check_output_file(o.plot_path, "--plot");
  if (!o.record_dir.empty() && !fs::is_directory(o.record_dir)) {
    throw UsageError("--record-dir: '" + o.record_dir + "' is not a directory");
  }
  check_output_folder(o.record_dir, "--record-dir");
  if (o.force && !o.record && o.record_dir.empty()) {
    throw UsageError("--force replaces recorded reports; use it with --record or --record-dir");
  }
  if (!o.devices.empty() && (o.record || !o.record_dir.empty() || !o.json_path.empty() ||
                             !o.markdown_path.empty() || !o.plot_path.empty())) {
    throw UsageError(
        "--devices prints one table per device; run --record/--json/--markdown/"
        "--plot with --device N on one device");
  }
  if (o.repo.empty()) o.repo = default_repo();
  std::vector<review::FamilySources> recorded_units;  // built-in units, checked below
  if (o.record || !o.record_dir.empty()) {
    for (pc_family f : families) {
      for (auto& unit : check_record_units(o.repo, o.plugins, family_name(f), "")) {
        recorded_units.push_back(std::move(unit));
      }
    }
  }

  VariantRegistry registry;
  register_builtin_kernels(registry);
  for (const auto& p : o.plugins) registry.load_plugin(p);
  if (o.record || !o.record_dir.empty()) {
    for (pc_family f : families) check_record_targets(o.repo, o.record_dir, o.force, registry, f);
    check_record_sources(o.repo, recorded_units);
  }
  int failed = 0;
  if (!o.devices.empty()) {  // the same sweep on each device, one table per device
    const std::vector<int> devices = bench_devices(o.devices);
    if (devices.empty()) return 3;
    for (pc_family f : families) {
      std::vector<bench::BenchReport> per_device;
      for (int d : devices) {
        o.run.device = d;
        std::cerr << "pagecheck bench: " << family_name(f) << " on device " << d << "\n";
        per_device.push_back(measure_family(o, registry, f));
        failed += failed_runs(per_device.back());
      }
      std::cout << (f == families.front() ? "" : "\n")
                << bench::render_device_tables(per_device, devices,
                                               bench::compare_devices(per_device));
    }
  } else {
    for (pc_family f : families) failed += bench_family(o, registry, f);
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure kernel bandwidth over a sweep of shapes on the GPU (cold, CUDA events)");
  cmd->add_option("--family", o->families,
                  "paged_attention, gather_cached_kv, reshape_and_cache, a comma list, or all");
  cmd->add_option("--variants", o->variants, "Variants to run (default: every registered one)")
      ->delimiter(',');
  cmd->add_flag("--quick", o->quick, "A few small shapes (smoke test)");
  cmd->add_option("--shapes", o->shapes, "Comma-separated shape labels (see --list-shapes)");
  cmd->add_flag("--list-shapes", o->list_shapes, "Print the sweep's shape labels and exit");
  cmd->add_option("--dtype", o->dtype, "Storage dtype of every shape")->capture_default_str();
  cmd->add_option("--json", o->json_path, "Write the report as JSON")->type_name("FILE");
  cmd->add_option("--markdown", o->markdown_path, "Write the report as Markdown")
      ->type_name("FILE");
  cmd->add_option("--plot", o->plot_path, "Write an SVG plot (tools/plot_bandwidth.py)")
      ->type_name("FILE");
  cmd->add_flag("--record", o->record,
                "Write fixtures/bandwidth/<unit>-<hash12>.{json,md,svg} for the sources' hash");
  cmd->add_flag("--force", o->force,
                "With --record/--record-dir: replace a report already recorded for the same "
                "sources (.json, .md and .svg together)");
  cmd->add_option("--record-dir", o->record_dir,
                  "Like --record, but write only <unit>-<hash12>.json into DIR (to carry back "
                  "from the GPU machine and import with `bench record`)")
      ->type_name("DIR");
  cmd->add_option("--repo", o->repo, "Repository root (default: found from the current dir)");
  cmd->add_option("--plugin", o->plugins, "Load kernel variants from a plugin library")
      ->type_name("PATH");
  CLI::Option* device =
      cmd->add_option("--device", o->run.device, "CUDA device index")->capture_default_str();
  cmd->add_option("--devices", o->devices,
                  "Run the same sweep on each of these GPUs ('all', or indices like 0,1): one "
                  "table per device, with a column that flags a result more than its noise away "
                  "from the other devices'")
      ->type_name("all|I,J,...")
      ->check(device_list())
      ->excludes(device);
  cmd->add_option("--seed", o->run.seed, "Seed of inputs and block tables")
      ->capture_default_str()
      ->check(seed_value());
  cmd->add_option("--warmup", o->run.warmup, "Untimed launches per measurement")
      ->capture_default_str();
  cmd->add_option("--min-samples", o->run.min_samples, "Cold samples at least")
      ->capture_default_str();
  cmd->add_option("--max-samples", o->run.max_samples, "Cold samples at most")
      ->capture_default_str();
  cmd->add_option("--max-noise", o->run.max_noise, "Stop when IQR/median is below this")
      ->capture_default_str();
  cmd->add_option("--timeout", o->run.timeout_s, "Seconds of sampling per measurement at most")
      ->capture_default_str();
  cmd->footer(
      "Exit status: 0 success; 1 a variant failed its launch or output check; 2 bad usage or "
      "bad input (unknown family, variant or shape, an output path that cannot be written, a "
      "recorded report in the way without --force, a report that measured nothing); 3 a CUDA "
      "error, no GPU, or an internal error.");
  add_bench_subcommands(*cmd, exit_code);
  cmd->callback([cmd, o, &exit_code] {
    if (!cmd->get_subcommands().empty()) return;  // `bench compare` / `bench record` ran
#ifdef PAGECHECK_BENCH_HAVE_CUDA
    try {
      exit_code = run_bench_command(*o);
    } catch (const CudaError& e) {
      std::cerr << "pagecheck bench: CUDA error: " << e.what() << "\n";
      exit_code = 3;
    }
#else
    exit_code = run_bench_command(*o);
#endif
  });
}

}  // namespace pagecheck::cli
