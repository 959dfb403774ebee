/// Shards of case indices.
#include "pagecheck/verify/check/shard.h"

#include <cstdlib>
#include <stdexcept>

namespace pagecheck::verify::check {
namespace {

int parse_int(std::string_view text, std::string_view what) {
  if (text.empty() || text.size() > 9) {
    throw std::invalid_argument(std::string(what) + ": '" + std::string(text) +
                                "' is not a small non-negative integer");
  }
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      throw std::invalid_argument(std::string(what) + ": '" + std::string(text) +
                                  "' is not a small non-negative integer");
    }
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::vector<int64_t> Shard::cases(int64_t num_cases) const {
  std::vector<int64_t> out;
  for (int64_t i = index; i < num_cases; i += count) out.push_back(i);
  return out;
}

std::string Shard::text() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    throw std::invalid_argument("--shard: '" + std::string(text) + "' is not of the form I/N");
  }
  Shard s;
  s.index = parse_int(text.substr(0, slash), "--shard index");
  s.count = parse_int(text.substr(slash + 1), "--shard count");
  if (s.count < 1 || s.index >= s.count) {
    throw std::invalid_argument("--shard: '" + std::string(text) + "' needs 0 <= I < N");
  }
  return s;
}

Shard shard_from_gtest_environment() {
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  if (index == nullptr || total == nullptr) return {};
  return parse_shard(std::string(index) + "/" + total);
}

}  // namespace pagecheck::verify::check
