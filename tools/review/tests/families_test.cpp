/// Family source lists, glob resolution and the content hash.
#include <gtest/gtest.h>

#include "pagecheck/bench/process.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/git.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

/// The EvidenceError message parse_family_sources gives for `text` ("" when it parses).
std::string parse_error(const std::string& text) {
  try {
    parse_family_sources(text, "kernels/families.json");
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "";
}

TEST(Families, SchemaIsRequiredAndChecked) {
  const std::string families = R"("families": [{"name": "a", "sources": ["x"]}])";
  EXPECT_EQ(parse_error("{\"schema\": \"pagecheck.families/1\", " + families + "}"), "");
  EXPECT_NE(parse_error("{" + families + "}").find("kernels/families.json: missing 'schema'"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"schema\": \"pagecheck.families/2\", " + families + "}")
                .find("kernels/families.json: unknown schema \"pagecheck.families/2\""),
            std::string::npos);
  EXPECT_NE(parse_error("{\"schema\": 1, " + families + "}").find("unknown schema 1"),
            std::string::npos);
}

TEST(Families, EmptyListIsRefused) {
  EXPECT_NE(parse_error(R"({"schema": "pagecheck.families/1", "families": []})")
                .find("kernels/families.json: 'families' is empty"),
            std::string::npos);
}

TEST(Families, GlobsMustStayInsideTheRepository) {
  for (const char* bad : {"../*", "..", "kernels/../../x", "a/..", "/etc/*", "kernels/../*"}) {
    const std::string text = std::string(R"({"schema": "pagecheck.families/1", "families": [)") +
                             R"({"name": "a", "sources": [")" + bad + R"("]}]})";
    EXPECT_NE(parse_error(text).find("kernels/families.json: families[0]: source glob '" +
                                     std::string(bad) + "' reaches outside the repository"),
              std::string::npos)
        << bad << ": " << parse_error(text);
  }
  for (const char* ok : {"..x/*", "a/..b", "kernels/src/*", "x..", "./a"}) {
    EXPECT_TRUE(glob_inside_repository(ok)) << ok;
  }
}

TEST(Families, ParseErrorsNameTheFileAndEntry) {
  EXPECT_THROW(parse_family_sources("{", "f.json"), EvidenceError);
  EXPECT_THROW(
      parse_family_sources(R"({"schema": "pagecheck.families/1", "families": {}})", "f.json"),
      EvidenceError);
  try {
    parse_family_sources(
        R"({"schema": "pagecheck.families/1", "families": [{"name": "a", "sources": []}]})",
        "f.json");
    FAIL() << "empty sources accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: families[0]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      parse_family_sources(
          R"({"schema": "pagecheck.families/1", "families": [{"name": "a", "sources": ["/abs"]}]})",
          "f"),
      EvidenceError);
  EXPECT_THROW(
      parse_family_sources(
          R"({"schema": "pagecheck.families/1", "families": [{"name": "a", "sources": ["x"]}, {"name": "a", "sources": ["y"]}]})",
          "f"),
      EvidenceError);
  const auto ok = parse_family_sources(
      R"({"schema": "pagecheck.families/1", "families": [{"name": "a", "sources": ["x/*.cu", "y.h"]}]})",
      "f");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].patterns.size(), 2u);
  EXPECT_THROW(find_family(ok, "b", "f"), EvidenceError);
}

TEST(Families, StarDoesNotCrossDirectories) {
  EXPECT_TRUE(path_matches("kernels/src/*.cu", "kernels/src/a.cu"));
  EXPECT_FALSE(path_matches("kernels/src/*.cu", "kernels/src/sub/a.cu"));
  EXPECT_TRUE(path_matches("kernels/src/*/*.cu", "kernels/src/sub/a.cu"));
  EXPECT_TRUE(
      path_matches("kernels/src/paged_attention*.cu*", "kernels/src/paged_attention_v1.cuh"));
  EXPECT_FALSE(path_matches("kernels/src/paged_attention*.cu*", "kernels/src/gather.cu"));
  const auto m = match_paths({"a/*.h", "a/x.*"}, {"b/x.h", "a/x.h", "a/y.h", "a/x.h"});
  EXPECT_EQ(m, (std::vector<std::string>{"a/x.h", "a/y.h"}));  // sorted, no duplicates
}

TEST(Families, WorkingTreeResolutionFindsOnlyMatchingRegularFiles) {
  ScratchRepo repo;
  repo.write("kernels/src/copy/notes.txt", "not a kernel");
  repo.write("kernels/src/copy/deeper/x.cu", "deeper");
  const auto files = resolve_sources(repo.root(), {"kernels/src/copy/*.cu"});
  EXPECT_EQ(files, (std::vector<std::string>{"kernels/src/copy/gather.cu"}));
  EXPECT_TRUE(resolve_sources(repo.root(), {"nowhere/*.cu"}).empty());
  const FamilySources nothing{"x", {"nowhere/*.cu"}, "", {}};
  EXPECT_THROW(working_tree_hash(repo.root(), nothing), EvidenceError);
}

TEST(ContentHash, DependsOnPathsAndBytesNotOnOrder) {
  const std::string h = content_hash({{"a.cu", "x"}, {"b.h", "y"}});
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, content_hash({{"b.h", "y"}, {"a.cu", "x"}}));
  EXPECT_NE(h, content_hash({{"a.cu", "x "}, {"b.h", "y"}}));  // a byte changed
  EXPECT_NE(h, content_hash({{"c.cu", "x"}, {"b.h", "y"}}));   // a file renamed
  EXPECT_NE(h, content_hash({{"a.cu", "xy"}, {"b.h", ""}}));   // bytes moved across files
  EXPECT_NE(h, content_hash({{"a.cu", "x"}}));                 // a file dropped
  EXPECT_THROW(content_hash({{"a.cu", "x"}, {"a.cu", "x"}}), std::invalid_argument);
  EXPECT_EQ(short_hash(h), h.substr(0, 12));
}

TEST(ContentHash, MatchesTheDocumentedStreamHashedBySha256sum) {
  // Independent check of the documented format with coreutils' sha256sum.
  ScratchRepo repo;
  std::string stream = "pagecheck-sources/1\n";
  for (const auto& [path, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"kernels/include/plugin.h", "/* fake ABI */\n"},
           {"kernels/src/copy/gather.cu", "__global__ void gather() {}\n"}}) {
    stream +=
        path + std::string(1, '\0') + std::to_string(bytes.size()) + std::string(1, '\0') + bytes;
  }
  repo.write("stream.bin", stream);
  const bench::ProcessResult p = bench::run_process({"sha256sum", repo.root() + "/stream.bin"});
  if (p.exit_code != 0) GTEST_SKIP() << "sha256sum not available";
  EXPECT_EQ(repo.hash("gather_cached_kv"), p.out.substr(0, 64));
}

TEST(ContentHash, CommitHashEqualsWorkingTreeHashOfTheSameFiles) {
  ScratchRepo repo;
  const std::string commit = repo.commit("base");
  const auto families = load_family_sources(repo.root());
  const auto tree = list_tree(repo.root(), commit);
  for (const auto& f : families) {
    EXPECT_EQ(commit_hash(repo.root(), commit, tree, f).hash,
              working_tree_hash(repo.root(), f).hash)
        << f.name;
  }
  repo.write("kernels/src/attention/attention.cu", "changed");
  EXPECT_NE(commit_hash(repo.root(), commit, tree, families[1]).hash,
            working_tree_hash(repo.root(), families[1]).hash);
  EXPECT_EQ(commit_hash(repo.root(), commit, tree, families[0]).hash,
            working_tree_hash(repo.root(), families[0]).hash);
}

}  // namespace
}  // namespace pagecheck::review
