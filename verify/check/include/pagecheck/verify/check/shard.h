#pragma once
/// Deterministic sharding of case indices: shard I of N owns the cases whose index is I mod N,
/// so the shards of one run are a disjoint cover of [0, cases) whatever N is.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pagecheck::verify::check {

/// One shard of a run.
struct Shard {
  int index = 0;  ///< 0-based shard index
  int count = 1;  ///< number of shards
  /// True when case `case_index` belongs to this shard.
  bool owns(int64_t case_index) const { return case_index % count == index; }
  /// The case indices in [0, cases) this shard owns, ascending.
  std::vector<int64_t> cases(int64_t num_cases) const;
  /// "I/N".
  std::string text() const;
};

/// Parses "I/N" (0 <= I < N); throws std::invalid_argument naming the text otherwise.
Shard parse_shard(std::string_view text);

/// The shard GoogleTest would run: GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS from the environment,
/// or 0/1 when unset. Throws std::invalid_argument on malformed values.
Shard shard_from_gtest_environment();

}  // namespace pagecheck::verify::check
