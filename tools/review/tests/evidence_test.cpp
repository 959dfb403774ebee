/// Verification records: validation, verdict, atomic writing and merging.
#include <gtest/gtest.h>

#include <fstream>

#include "pagecheck/review/evidence.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

VerificationRecord record(const std::string& hash) {
  VerificationRecord r = testing::test_record("gather_cached_kv", hash);
  r.variants.push_back(testing::entry("naive", 10, 5, 10, 0, 0));
  r.variants.push_back(testing::entry("vectorized", 12, 5, 10, 0, 2));
  return r;
}

TEST(Evidence, VerdictNeedsEveryVariantToPassSomethingAndFailNothing) {
  VerificationRecord r = record(std::string(64, 'a'));
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.summary(), "2 variants, 22 cases: all passed");
  r.variants[1] = testing::entry("vectorized", 12, 5, 9, 1, 2);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.summary(), "2 variants, 22 cases: vectorized: 1 of 12 cases failed");
  r.variants[1] = testing::entry("vectorized", 2, 5, 0, 0, 2);  // all declined: nothing verified
  EXPECT_FALSE(r.passed());
  r.variants.clear();
  EXPECT_FALSE(r.passed());
}

TEST(Evidence, ValidationNamesTheProblem) {
  VerificationRecord r = record("xyz");
  EXPECT_THROW(r.validate("r"), EvidenceError);
  r = record(std::string(64, 'a'));
  r.variants[0].cases = 11;  // != passed + failed + not_supported
  try {
    r.validate("r.json");
    FAIL() << "inconsistent counts accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: variants[0]: cases (11)"), std::string::npos)
        << e.what();
  }
  r = record(std::string(64, 'a'));
  r.variants[1].variant = "naive";
  EXPECT_THROW(r.validate("r"), EvidenceError);
}

TEST(Evidence, WriteReadRoundTripAtTheHashPath) {
  ScratchRepo repo;
  const VerificationRecord r = record(std::string(64, 'b'));
  const std::string path = write_verification_record(repo.root(), r);
  EXPECT_EQ(path, repo.root() + "/fixtures/verification/gather_cached_kv-bbbbbbbbbbbb.json");
  const VerificationRecord back = read_verification_record(path);
  EXPECT_EQ(to_json(back), to_json(r));
}

TEST(Evidence, MergeKeepsOtherVariantsAndReplacesSameNamedOnes) {
  ScratchRepo repo;
  VerificationRecord first = record(std::string(64, 'c'));
  write_verification_record(repo.root(), first);
  VerificationRecord second = first;
  second.variants = {testing::entry("vectorized", 20, 6, 19, 1, 0),
                     testing::entry("extra", 5, 6, 5, 0, 0)};
  const std::string path = write_verification_record(repo.root(), second);
  const VerificationRecord merged = read_verification_record(path);
  ASSERT_EQ(merged.variants.size(), 3u);
  EXPECT_EQ(merged.variants[0].variant, "extra");
  EXPECT_EQ(merged.variants[1].variant, "naive");
  EXPECT_EQ(merged.variants[2].variant, "vectorized");
  EXPECT_EQ(merged.variants[2].failed, 1);
  EXPECT_FALSE(merged.passed());
  // Without merging the file holds exactly the new record.
  write_verification_record(repo.root(), first, false);
  EXPECT_EQ(read_verification_record(path).variants.size(), 2u);
}

TEST(Evidence, HandEditedVerdictOrCorruptFileIsRejectedNamingTheFile) {
  ScratchRepo repo;
  const std::string path = write_verification_record(repo.root(), record(std::string(64, 'd')));
  nlohmann::json j = to_json(read_verification_record(path));
  j["variants"][0]["failed"] = 1;
  j["variants"][0]["passed"] = 9;  // counts still add up, but "passed": true now lies
  std::ofstream(path) << j.dump();
  try {
    read_verification_record(path);
    FAIL() << "edited record accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'passed' disagrees"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "not json";
  EXPECT_THROW(read_verification_record(path), EvidenceError);
  EXPECT_THROW(write_verification_record(repo.root(), record(std::string(64, 'd'))),
               EvidenceError);  // merging into a corrupt file refuses to overwrite it
}

TEST(Evidence, FolderInPlaceOfARecordIsRejectedNamingIt) {
  ScratchRepo repo;
  const std::string path =
      verification_record_path(repo.root(), "gather_cached_kv", std::string(64, 'e'));
  std::filesystem::create_directories(path);
  try {
    read_verification_record(path);
    FAIL() << "a folder was read as a record";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": is a directory, not a verification record"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pagecheck::review
