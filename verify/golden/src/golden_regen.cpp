/// `pagecheck golden regen`: rebuild goldens through temporary files, refuse silent changes.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

#include "dir_lock.h"
#include "manifest.h"
#include "pagecheck/verify/atomic_file.h"
#include "pagecheck/verify/golden_dir.h"
#include "pagecheck/verify/golden_tools.h"

namespace pagecheck::verify::golden {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void print_changes(const std::string& old_path, const GoldenFile& built, std::ostream& out) {
  try {
    const std::vector<std::string> lines = describe_differences(read_golden_file(old_path), built);
    if (!lines.empty()) out << "    (committed vs regenerated)\n";
    for (const std::string& line : lines) out << "    " << line << "\n";
    if (lines.empty()) out << "    same content, different bytes (another HDF5 library?)\n";
  } catch (const GoldenError& e) {
    out << "    the existing file is unreadable: " << e.what() << "\n";
  }
}

}  // namespace

int regen_goldens(const RegenOptions& options, std::ostream& out) {
  std::error_code ec;
  if (!fs::is_directory(options.dir, ec)) {
    throw std::invalid_argument("--dir: not a directory: " + options.dir);
  }
  if (access(options.dir.c_str(), W_OK | X_OK) != 0) {
    throw std::invalid_argument(options.dir +
                                ": golden directory is not writable: " + std::strerror(errno));
  }
  std::vector<const GoldenCase*> selected;
  for (const std::string& name : options.cases) selected.push_back(&find_case(name));
  if (options.cases.empty()) {
    for (const GoldenCase& c : case_catalogue()) selected.push_back(&c);
  }
  for (const GoldenCase* def : selected) {  // a golden's place holds a file or nothing
    const std::string target = join_path(options.dir, def->name + ".h5");
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
      throw std::invalid_argument(target + ": not a regular file (a directory?); golden " +
                                  def->name + " not regenerated");
    }
  }
  const std::string manifest_path = join_path(options.dir, kManifestName);
  if (fs::exists(manifest_path, ec) && !fs::is_regular_file(manifest_path, ec)) {
    throw std::invalid_argument(manifest_path + ": not a regular file (a directory?)");
  }
  // One regen at a time per directory; the manifest is read under the lock, so the entries
  // another regen wrote just before are merged, not lost.
  const DirLock lock(options.dir, out);
  remove_stale_temporaries(options.dir, lock, out);
  nlohmann::json previous = nlohmann::json::object();  // name -> recorded manifest entry
  try {
    const nlohmann::json manifest = read_manifest(options.dir);  // alive while iterating
    for (const auto& entry : manifest.at("cases")) {
      previous[entry.at("name").get<std::string>()] = entry;
    }
  } catch (const GoldenError& e) {
    out << "note: no usable previous manifest (" << e.what() << ")\n";
  }
  // A golden the new manifest must describe from its file has to be readable before anything
  // is written.
  for (const GoldenCase& def : case_catalogue()) {
    const std::string target = join_path(options.dir, def.name + ".h5");
    bool chosen = false;
    for (const GoldenCase* s : selected) chosen = chosen || s == &def;
    if (!chosen && !previous.contains(def.name) && fs::exists(target, ec)) {
      (void)read_golden_file(target);
    }
  }

  int refused = 0;
  for (const GoldenCase* def : selected) {
    const std::string target = join_path(options.dir, def->name + ".h5");
    verify::TempFile temp(target);
    const GoldenFile built = build_golden(*def);
    try {
      write_golden_file(built, temp.path());
    } catch (const std::runtime_error& e) {  // disk full, file too large, I/O error
      throw std::runtime_error("cannot write golden " + target + ": " + e.what());
    }
    if (!fs::exists(target, ec)) {
      temp.commit(target);
      out << "created   " << def->name << " (" << fs::file_size(target) << " bytes)\n";
    } else if (read_bytes(temp.path()) == read_bytes(target)) {
      out << "unchanged " << def->name << "\n";
    } else if (options.force) {
      out << "replaced  " << def->name << " (--force); changes:\n";
      print_changes(target, built, out);
      temp.commit(target);
    } else {
      out << "CHANGED   " << def->name << ": not replaced (use --force if intended); changes:\n";
      print_changes(target, built, out);
      ++refused;
    }
  }

  if (refused > 0) {
    out << "unchanged " << kManifestName << " (not updated while a golden is refused)\n"
        << refused << " golden(s) changed and were not replaced\n";
    return 1;
  }
  // Entries of the cases rebuilt now come from their files; the others keep their recorded
  // entry (so an edited golden is not blessed by regenerating another case).
  nlohmann::json entries = nlohmann::json::array();
  for (const GoldenCase& def : case_catalogue()) {
    const std::string target = join_path(options.dir, def.name + ".h5");
    bool rebuilt = false;
    for (const GoldenCase* s : selected) rebuilt = rebuilt || s == &def;
    if (!fs::exists(target, ec)) {
      out << "warning: " << def.name << " has no file yet; left out of the manifest\n";
    } else if (!rebuilt && previous.contains(def.name)) {
      entries.push_back(previous.at(def.name));
    } else {
      entries.push_back(manifest_entry(def, read_golden_file(target), target));
    }
  }
  for (const auto& item : fs::directory_iterator(options.dir)) {
    const std::string stem = item.path().stem().string();
    if (item.path().extension() != ".h5") continue;
    bool known = false;
    for (const GoldenCase& def : case_catalogue()) known = known || def.name == stem;
    if (!known) out << "warning: " << item.path().string() << " is not in the catalogue\n";
  }
  const nlohmann::json manifest = make_manifest(std::move(entries));
  out << (write_manifest(options.dir, manifest) ? "updated   " : "unchanged ") << kManifestName
      << " (" << manifest.at("cases").size() << " cases, "
      << manifest.at("total_bytes").get<int64_t>() << " bytes)\n";
  return 0;
}

}  // namespace pagecheck::verify::golden
