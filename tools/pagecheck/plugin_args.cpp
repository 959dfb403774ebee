/// `--plugin` arguments: load each library once up front so that a bad plugin is bad usage
/// (exit 2, message naming the library) before any worker process or GPU work starts.
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "pagecheck/registry.h"

namespace pagecheck::cli {

void check_plugins_loadable(std::vector<std::string>& plugins) {
  for (std::string& path : plugins) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      path = std::filesystem::absolute(path, ec).lexically_normal().string();
    }
    VariantRegistry scratch;
    try {
      scratch.load_plugin(path);
    } catch (const RegistryError& e) {
      throw UsageError(std::string("--plugin: ") + e.what());
    }
  }
}

}  // namespace pagecheck::cli
