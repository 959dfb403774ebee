/// Terminal table and Markdown of a bandwidth report.
#include <cstdio>
#include <sstream>

#include "pagecheck/bench/render.h"

namespace pagecheck::bench {

namespace {

std::string cell(std::string text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

std::string clocks_line(const Environment& e) {
  std::ostringstream os;
  os << "SM " << e.sm_clock_mhz << "/" << e.max_sm_clock_mhz << " MHz, memory " << e.mem_clock_mhz
     << "/" << e.max_mem_clock_mhz << " MHz (current/max, " << e.clock_source << ")";
  return os.str();
}

/// "4.1 us (method; noise 1.2%)", or "not measured" (a report from before the floor).
std::string floor_line(const LaunchFloor& f) {
  if (!f.measured()) return "not measured";
  return format_number(f.time_us.median) + " us (" + f.method + "; noise " +
         format_percent(f.time_us.noise) + ")";
}

std::string ceiling_line(const CeilingResult& c) {
  return format_number(c.gbps) + " GB/s (" + c.method + "; median " +
         format_number(c.time_us.median) + " us, noise " + format_percent(c.time_us.noise) + ")";
}

/// "gather_cached_kv", or "example_gather (gather_cached_kv)" for a plugin's unit.
std::string display_name(const BenchReport& r) {
  return r.unit_name() == r.family ? r.family : r.unit_name() + " (" + r.family + ")";
}

}  // namespace

std::string render_report_table(const BenchReport& r) {
  const CeilingResult& ceil = r.family_ceiling();
  std::ostringstream os;
  os << display_name(r) << " on " << r.environment.device << " (sources "
     << r.source_hash.substr(0, 12) << ")\n";
  os << "ceilings: copy " << format_number(r.copy_ceiling.gbps) << " GB/s, read "
     << format_number(r.read_ceiling.gbps) << " GB/s; share is of the " << ceil.kind
     << " ceiling; launch floor " << floor_line(r.launch_floor) << "\n";
  const std::size_t w_shape = 16, w_var = 18;
  os << pad("shape", w_shape, false) << " " << pad("variant", w_var, false) << " "
     << pad("median us", 11, true) << " " << pad("q1..q3 us", 17, true) << " "
     << pad("noise", 7, true) << " " << pad("GB/s", 7, true) << " " << pad("% ceil", 7, true)
     << "  notes\n";
  for (const auto& sr : r.shapes) {
    for (const auto& v : sr.variants) {
      os << pad(sr.shape.label, w_shape, false) << " " << pad(v.variant, w_var, false) << " ";
      if (v.status == RunStatus::kOk) {
        os << pad(format_number(v.time_us.median), 11, true) << " "
           << pad(format_number(v.time_us.q1) + ".." + format_number(v.time_us.q3), 17, true) << " "
           << pad(format_percent(v.time_us.noise), 7, true) << " "
           << pad(format_number(v.gbps), 7, true) << " "
           << pad(format_percent(v.ceiling_share), 7, true);
      } else {
        os << pad("-", 11, true) << " " << pad("-", 17, true) << " " << pad("-", 7, true) << " "
           << pad("-", 7, true) << " " << pad("-", 7, true);
      }
      const std::string flags = result_flags(v, r.launch_floor);
      if (!flags.empty()) os << "  " << flags;
      os << "\n";
    }
  }
  return os.str();
}

std::string render_report_markdown(const BenchReport& r, const std::string& plot_link) {
  const Environment& e = r.environment;
  const MethodSettings& m = r.method;
  const CeilingResult& ceil = r.family_ceiling();
  std::ostringstream os;
  os << "## Bandwidth: `" << display_name(r) << "` (sources `" << r.source_hash.substr(0, 12)
     << "`)\n\n";
  os << "- Device: " << e.device << " (compute capability " << e.compute_capability << ", "
     << e.sm_count << " SMs, L2 " << format_bytes(e.l2_bytes) << ", "
     << format_bytes(e.memory_bytes) << ", PCI " << e.pci_bus_id << ")\n";
  os << "- Driver " << e.driver_version << " (CUDA " << e.cuda_driver_version << "), runtime CUDA "
     << e.cuda_runtime_version << "\n";
  os << "- Clocks: " << clocks_line(e) << "\n";
  os << "- " << r.tool_version << " at `" << r.git_revision << "`"
     << (r.git_dirty ? " (working tree differs)" : "") << ", " << r.date << ", sweep `" << r.sweep
     << "`, source hash `" << r.source_hash << "`\n";
  os << "- Method: " << m.timing << " samples, L2 flushed by a memset of "
     << format_bytes(m.l2_flush_bytes) << " before each; CUDA events around the launch only; "
     << m.warmup << " warm-up launches; " << m.min_samples << " to " << m.max_samples
     << " samples, stopping once noise (IQR / median) <= " << format_percent(m.max_noise)
     << " or after " << format_number(m.timeout_s) << " s; random inputs, seed " << m.seed << "\n";
  os << "- Copy ceiling: " << ceiling_line(r.copy_ceiling) << "\n";
  os << "- Read ceiling: " << ceiling_line(r.read_ceiling) << "\n";
  os << "- Launch floor: " << floor_line(r.launch_floor) << "\n";
  os << "- Bandwidth = bytes the kernel must move (docs/performance.md) / median time; share "
     << "is of the **" << ceil.kind << "** ceiling.\n\n";
  if (!plot_link.empty())
    os << "![bandwidth of " << display_name(r) << "](" << plot_link << ")\n\n";

  for (const auto& variant : r.variants) {
    os << "### `" << variant << "`\n\n";
    os << "| shape | bytes moved | median us | q1..q3 us | noise | GB/s | % of " << ceil.kind
       << " ceiling | notes |\n";
    os << "|---|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& sr : r.shapes) {
      const VariantResult* v = sr.find(variant);
      if (v == nullptr) continue;
      os << "| " << sr.shape.label << " | " << format_bytes(sr.bytes.total()) << " | ";
      if (v->status == RunStatus::kOk) {
        os << format_number(v->time_us.median) << " | " << format_number(v->time_us.q1) << ".."
           << format_number(v->time_us.q3) << " | " << format_percent(v->time_us.noise) << " | "
           << format_number(v->gbps) << " | " << format_percent(v->ceiling_share);
      } else {
        os << "- | - | - | - | -";
      }
      os << " | " << cell(result_flags(*v, r.launch_floor)) << " |\n";
    }
    os << "\n";
  }
  if (r.variants.size() >= 2) {
    os << "### Variants side by side (against `" << r.variants.front() << "`)\n\n";
    for (std::size_t i = 1; i < r.variants.size(); ++i) {
      os << render_comparison_markdown(side_by_side(r, r.variants.front(), r.variants[i])) << "\n";
    }
  }
  os << "Shapes:\n\n";
  for (const auto& sr : r.shapes)
    os << "- `" << sr.shape.label << "`: " << describe(sr.shape) << "\n";
  return os.str();
}

}  // namespace pagecheck::bench
