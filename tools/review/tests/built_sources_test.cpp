/// The kernel sources' hashes compiled into the binary (built_sources.h): this build's are the
/// repository's, and a binary built from other sources is refused with both hashes named.
#include <gtest/gtest.h>

#include <filesystem>

#include "pagecheck/review/built_sources.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/families.h"
#include "pagecheck/verify/repo_root.h"

namespace pagecheck::review {
namespace {

TEST(BuiltSources, ThisBuildsHashesAreTheRepositorysSources) {
  const auto repo = verify::find_repo_root(std::filesystem::current_path().string());
  ASSERT_TRUE(repo.has_value()) << "run from inside the repository (its build directory)";
  int builtin = 0;
  for (const FamilySources& unit : load_family_sources(*repo)) {
    if (!unit.variants.empty()) {
      EXPECT_EQ(built_source_hash(unit.name), "") << unit.name << " is a plugin's unit";
      continue;
    }
    ++builtin;
    EXPECT_EQ(built_source_hash(unit.name), working_tree_hash(*repo, unit).hash)
        << unit.name << ": the build's hash is not the sources' (rebuild after editing them)";
  }
  EXPECT_GE(builtin, 3);
  EXPECT_EQ(built_source_hashes().size(), static_cast<std::size_t>(builtin));
}

TEST(BuiltSources, AMismatchNamesTheUnitBothHashesAndTheRepository) {
  const std::string built(64, 'a');
  const std::string tree(64, 'b');
  const std::string m = built_sources_mismatch("gather_cached_kv", built, tree, "/some/repo");
  EXPECT_NE(m.find("gather_cached_kv"), std::string::npos) << m;
  EXPECT_NE(m.find(std::string(12, 'a')), std::string::npos) << m;
  EXPECT_NE(m.find(std::string(12, 'b')), std::string::npos) << m;
  EXPECT_NE(m.find("/some/repo"), std::string::npos) << m;
  EXPECT_EQ(built_sources_mismatch("gather_cached_kv", built, built, "/some/repo"), "");
  EXPECT_EQ(built_sources_mismatch("example_gather", "", tree, "/some/repo"), "")
      << "a unit the binary does not know is not refused";
}

}  // namespace
}  // namespace pagecheck::review
