/// The revision a record carries (see build_revision.h).
#include "pagecheck/review/build_revision.h"
#include "pagecheck/review/git.h"
#include "pagecheck/review/run_conditions.h"

namespace pagecheck::review {

BuildRevision recording_revision(const std::string& repo, const BuildRevision& built) {
  if (built.known()) return built;
  return BuildRevision{git_head(repo).value_or(""), record_dirty(repo)};
}

BuildRevision recording_revision(const std::string& repo) {
  return recording_revision(repo, build_revision());
}

}  // namespace pagecheck::review
