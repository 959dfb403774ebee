/// The revision a verification record carries (issue 19 task 2): the build's own revision
/// when the binary knows it, even where the repository copy's .git shows another (stale) HEAD;
/// the repository's HEAD and dirty state only for a build made outside git.
#include <gtest/gtest.h>

#include "pagecheck/review/build_revision.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

TEST(BuildRevision, TheBuildsRevisionWinsOverAStaleCheckout) {
  testing::ScratchRepo repo;
  const std::string stale = repo.commit("an old commit the copied .git still shows");
  const BuildRevision built{"0123456789abcdef0123456789abcdef01234567", false};
  const BuildRevision r = recording_revision(repo.root(), built);
  EXPECT_EQ(r.revision, built.revision);
  EXPECT_NE(r.revision, stale);
  EXPECT_FALSE(r.dirty);  // the copy looks clean or dirty: the build's flag is what counts
  repo.write("kernels/src/copy/gather.cu", "__global__ void gather() { /* edited */ }\n");
  EXPECT_FALSE(recording_revision(repo.root(), built).dirty);
  EXPECT_TRUE(recording_revision(repo.root(), BuildRevision{built.revision, true}).dirty);
}

TEST(BuildRevision, WithoutABuildRevisionTheRepositorysGitStateIsUsed) {
  testing::ScratchRepo repo;
  const std::string head = repo.commit("head");
  BuildRevision r = recording_revision(repo.root(), BuildRevision{});
  EXPECT_EQ(r.revision, head);
  EXPECT_FALSE(r.dirty);
  repo.write("kernels/src/copy/gather.cu", "__global__ void gather() { /* edited */ }\n");
  r = recording_revision(repo.root(), BuildRevision{});
  EXPECT_EQ(r.revision, head);
  EXPECT_TRUE(r.dirty);
  const BuildRevision none = recording_revision("/nonexistent/pagecheck-repo", BuildRevision{});
  EXPECT_EQ(none.revision, "");
  EXPECT_TRUE(none.dirty);  // nothing shows the tree is a commit's
}

TEST(BuildRevision, TheCompiledInRevisionIsACommitIdOrEmpty) {
  const BuildRevision built = build_revision();
  if (!built.known()) GTEST_SKIP() << "built outside git";
  EXPECT_EQ(built.revision.size(), 40u) << built.revision;  // SHA-1 object ids
  EXPECT_EQ(built.revision.find_first_not_of("0123456789abcdef"), std::string::npos)
      << built.revision;
  EXPECT_EQ(recording_revision("/nonexistent/pagecheck-repo").revision, built.revision);
}

}  // namespace
}  // namespace pagecheck::review
