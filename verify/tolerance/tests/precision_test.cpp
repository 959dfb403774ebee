/// The precision declaration: ABI and JSON forms, names, rounding counts and the acceptance
/// limit (the loosest model pagecheck accepts).
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "pagecheck/plugin.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify {
namespace {

/// A random declaration (any combination of fields, terms in [0, 16]).
PrecisionModel random_model(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> bit(0, 1), terms(0, 16);
  PrecisionModel m;
  m.qk = bit(rng) ? Accum::kStorage : Accum::kFloat32;
  m.pv = bit(rng) ? Accum::kStorage : Accum::kFloat32;
  m.round_logits = bit(rng);
  m.round_weights = bit(rng);
  m.round_products = bit(rng);
  m.round_partition_outputs = bit(rng);
  m.round_partition_sums = bit(rng);
  if (m.qk == Accum::kStorage || m.pv == Accum::kStorage) m.storage_sum_terms = terms(rng);
  return m;
}

TEST(Precision, StrictIsAllZeroAndNamed) {
  const PrecisionModel strict = PrecisionModel::strict();
  EXPECT_TRUE(strict.is_strict());
  EXPECT_EQ(strict.describe(), "float32 strict");
  const PrecisionTerms t = strict.terms(128, 4096);
  EXPECT_EQ(t.logit + t.weight + t.value + t.tiny, 0.0);
  pc_precision abi{};
  abi.struct_size = sizeof abi;
  EXPECT_TRUE(from_abi(abi).is_strict());
}

TEST(Precision, LoosestIsEngineStyle) {
  const PrecisionModel m = PrecisionModel::loosest();
  EXPECT_EQ(m.describe(), "engine: weights+partition outputs rounded, 8-term storage sums of P.V");
  EXPECT_TRUE(m.accepted());
  const PrecisionTerms t = m.terms(128, 4096);
  EXPECT_EQ(t.logit, 0);   // the logit path stays float32
  EXPECT_EQ(t.weight, 1);  // one rounding per weight
  EXPECT_EQ(t.value, 9);   // 8-term storage sums + the partition output
  // A storage sum never has more terms than the sum itself.
  EXPECT_EQ(m.terms(128, 3).value, 4);
}

TEST(Precision, AbiFormMirrorsEveryField) {
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 200; ++i) {
    const PrecisionModel m = random_model(rng);
    pc_precision abi{};
    abi.struct_size = sizeof abi;
    abi.qk_accum = static_cast<pc_accum>(m.qk);
    abi.pv_accum = static_cast<pc_accum>(m.pv);
    abi.rounded = (m.round_logits ? uint32_t{PC_ROUND_LOGITS} : 0u) |
                  (m.round_weights ? uint32_t{PC_ROUND_WEIGHTS} : 0u) |
                  (m.round_products ? uint32_t{PC_ROUND_PRODUCTS} : 0u) |
                  (m.round_partition_outputs ? uint32_t{PC_ROUND_PARTITION_OUTPUTS} : 0u) |
                  (m.round_partition_sums ? uint32_t{PC_ROUND_PARTITION_SUMS} : 0u);
    abi.storage_sum_terms = m.storage_sum_terms;
    EXPECT_EQ(from_abi(abi), m) << m.describe();
  }
}

TEST(Precision, AbiRejectsUnknownBitsAndBadAccumulators) {
  pc_precision abi{};
  abi.struct_size = sizeof abi;
  abi.rounded = 1u << 7;
  EXPECT_THROW(
      {
        try {
          from_abi(abi);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("precision.rounded"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  abi.rounded = 0;
  abi.pv_accum = static_cast<pc_accum>(5);
  EXPECT_THROW(from_abi(abi), std::invalid_argument);
  abi.pv_accum = PC_ACCUM_FLOAT32;
  abi.storage_sum_terms = 8;  // sums over 8 terms, but no accumulator in the storage dtype
  EXPECT_THROW(from_abi(abi), std::invalid_argument);
}

TEST(Precision, AbiFieldsPastTheWritersSizeAreZero) {
  pc_precision abi{};
  abi.qk_accum = PC_ACCUM_STORAGE;
  abi.pv_accum = PC_ACCUM_STORAGE;
  abi.rounded = PC_ROUND_WEIGHTS;
  abi.storage_sum_terms = 8;
  abi.struct_size = offsetof(pc_precision, rounded);  // a writer that knew two fields only
  const PrecisionModel m = from_abi(abi);
  EXPECT_EQ(m.qk, Accum::kStorage);
  EXPECT_FALSE(m.round_weights);
  EXPECT_EQ(m.storage_sum_terms, 0);
}

TEST(Precision, JsonRoundTripsAndNamesBadFields) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    const PrecisionModel m = random_model(rng);
    const nlohmann::json j = m;
    EXPECT_EQ(j.get<PrecisionModel>(), m) << j.dump();
  }
  const nlohmann::json loosest = PrecisionModel::loosest();
  EXPECT_EQ(loosest.dump(), R"({"pv_accum":"storage","qk_accum":"float32","rounded":["weights",)"
                            R"("partition_outputs"],"storage_sum_terms":8})");
  auto message = [](const char* text) {
    try {
      (void)nlohmann::json::parse(text).get<PrecisionModel>();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"rounded":["weight"]})").find("'weight'"), std::string::npos);
  EXPECT_NE(message(R"({"pv_acum":"storage"})").find("'pv_acum'"), std::string::npos);
  EXPECT_NE(message(R"({"qk_accum":"half"})").find("'half'"), std::string::npos);
  EXPECT_NE(message(R"({"storage_sum_terms":-1,"pv_accum":"storage"})").find("storage_sum_terms"),
            std::string::npos);
}

TEST(Precision, DescribeNamesEachPart) {
  PrecisionModel m;
  m.qk = Accum::kStorage;
  EXPECT_EQ(m.describe(), "engine: whole storage sums of q.k");
  m.round_logits = true;
  m.round_partition_sums = true;
  m.pv = Accum::kStorage;
  m.storage_sum_terms = 4;
  EXPECT_EQ(m.describe(),
            "engine: logits+partition sums rounded, 4-term storage sums of q.k and P.V");
}

TEST(Precision, AcceptanceIsTheLoosestModelsCounts) {
  // Anything on the logit path, more than 8 storage terms, or whole storage sums is looser.
  PrecisionModel qk_storage;
  qk_storage.qk = Accum::kStorage;
  qk_storage.storage_sum_terms = 2;
  PrecisionModel wide = PrecisionModel::loosest();
  wide.storage_sum_terms = 16;
  PrecisionModel whole = PrecisionModel::loosest();
  whole.storage_sum_terms = 0;
  PrecisionModel logits;
  logits.round_logits = true;
  for (const PrecisionModel& m : {qk_storage, wide, whole, logits}) {
    EXPECT_FALSE(m.accepted()) << m.describe();
    EXPECT_THROW(m.check_accepted(), std::invalid_argument) << m.describe();
  }
  // Products rounded are implied by a storage sum: the engine-style simulation's declaration
  // (weights, products and partition outputs rounded, 8-term sums) is exactly the limit.
  PrecisionModel engine = PrecisionModel::loosest();
  engine.round_products = true;
  EXPECT_TRUE(engine.accepted());
  EXPECT_NO_THROW(engine.check_accepted());
  // Every accepted model's counts are within the loosest's, for every size.
  std::mt19937_64 rng(11);
  int accepted = 0;
  for (int i = 0; i < 500; ++i) {
    const PrecisionModel m = random_model(rng);
    if (!m.accepted()) continue;
    ++accepted;
    for (int64_t T : {1, 7, 8, 9, 4096}) {
      const PrecisionTerms t = m.terms(128, T), limit = PrecisionModel::loosest().terms(128, T);
      EXPECT_LE(t.logit, limit.logit);
      EXPECT_LE(t.weight, limit.weight);
      EXPECT_LE(t.value, limit.value) << m.describe() << " T=" << T;
      EXPECT_LE(t.tiny, limit.tiny);
    }
  }
  EXPECT_GT(accepted, 10);  // the draw reaches accepted models
}

}  // namespace
}  // namespace pagecheck::verify
