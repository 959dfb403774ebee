/// The default run folder for artefacts.
#include "output_paths.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>

namespace pagecheck::cli {

namespace fs = std::filesystem;

std::string default_run_folder(const std::string& command) {
  std::error_code ec;
  fs::path temp = fs::temp_directory_path(ec);
  if (ec) temp = "/tmp";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return (temp / "pagecheck-runs" / (command + "-" + stamp + "-" + std::to_string(::getpid())))
      .string();
}

}  // namespace pagecheck::cli
