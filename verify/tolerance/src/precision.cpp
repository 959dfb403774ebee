/// The precision declaration: validation, its rounding counts, names, the ABI and JSON forms.
#include "pagecheck/verify/precision.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "pagecheck/plugin.h"

namespace pagecheck::verify {
namespace {

static_assert(static_cast<int32_t>(Accum::kFloat32) == PC_ACCUM_FLOAT32);
static_assert(static_cast<int32_t>(Accum::kStorage) == PC_ACCUM_STORAGE);

/// One rounded intermediate: its PC_ROUND_* flag, JSON name, readable name and field.
struct RoundedField {
  uint32_t flag;
  const char* json;
  const char* text;
  bool PrecisionModel::*field;
};

constexpr RoundedField kRounded[] = {
    {PC_ROUND_LOGITS, "logits", "logits", &PrecisionModel::round_logits},
    {PC_ROUND_WEIGHTS, "weights", "weights", &PrecisionModel::round_weights},
    {PC_ROUND_PRODUCTS, "products", "products", &PrecisionModel::round_products},
    {PC_ROUND_PARTITION_OUTPUTS, "partition_outputs", "partition outputs",
     &PrecisionModel::round_partition_outputs},
    {PC_ROUND_PARTITION_SUMS, "partition_sums", "partition sums",
     &PrecisionModel::round_partition_sums},
};

/// Sizes large enough that every storage sum is limited by storage_sum_terms, not by the
/// problem (acceptance must hold for any problem).
constexpr int64_t kAnySize = int64_t{1} << 30;

void check_accum(Accum accum, const char* field) {
  if (accum != Accum::kFloat32 && accum != Accum::kStorage) {
    throw std::invalid_argument(std::string("precision.") + field + ": accumulator " +
                                std::to_string(static_cast<int32_t>(accum)) +
                                " is neither float32 (0) nor storage (1)");
  }
}

}  // namespace

const char* accum_name(Accum accum) {
  return accum == Accum::kStorage ? "storage" : "float32";
}

Accum parse_accum(std::string_view text) {
  if (text == "float32") return Accum::kFloat32;
  if (text == "storage") return Accum::kStorage;
  throw std::invalid_argument("accumulator '" + std::string(text) +
                              "': expected 'float32' or 'storage'");
}

PrecisionModel PrecisionModel::loosest() {
  PrecisionModel m;
  m.pv = Accum::kStorage;
  m.round_weights = true;
  m.round_partition_outputs = true;
  m.storage_sum_terms = 8;
  return m;
}

void PrecisionModel::validate() const {
  check_accum(qk, "qk_accum");
  check_accum(pv, "pv_accum");
  if (storage_sum_terms < 0) {
    throw std::invalid_argument(
        "precision.storage_sum_terms: " + std::to_string(storage_sum_terms) + " is negative");
  }
  if (storage_sum_terms > 0 && qk != Accum::kStorage && pv != Accum::kStorage) {
    throw std::invalid_argument(
        "precision.storage_sum_terms: " + std::to_string(storage_sum_terms) +
        " terms, but neither qk_accum nor pv_accum is 'storage'");
  }
}

PrecisionTerms PrecisionModel::terms(int64_t qk_terms, int64_t pv_terms) const {
  auto storage_terms = [&](Accum accum, int64_t whole) -> double {
    if (accum != Accum::kStorage) return 0;
    return static_cast<double>(storage_sum_terms > 0 ? std::min<int64_t>(storage_sum_terms, whole)
                                                     : whole);
  };
  const double kq = storage_terms(qk, std::max<int64_t>(qk_terms, 1));
  const double kv = storage_terms(pv, std::max<int64_t>(pv_terms, 1));
  const bool pv_storage = pv == Accum::kStorage;
  PrecisionTerms t;
  t.logit = kq + round_logits + round_partition_sums;
  t.weight = static_cast<double>(round_weights) + round_partition_sums;
  t.value = (pv_storage ? kv : static_cast<double>(round_products)) + round_partition_outputs;
  t.tiny = static_cast<double>(round_weights) + (pv_storage ? 2.0 : round_products) +
           round_partition_outputs;
  return t;
}

bool PrecisionModel::accepted() const {
  const PrecisionTerms t = terms(kAnySize, kAnySize);
  const PrecisionTerms limit = loosest().terms(kAnySize, kAnySize);
  return t.logit <= limit.logit && t.weight <= limit.weight && t.value <= limit.value &&
         t.tiny <= limit.tiny;
}

void PrecisionModel::check_accepted() const {
  validate();
  if (accepted()) return;
  const PrecisionTerms t = terms(kAnySize, kAnySize);
  const PrecisionTerms limit = loosest().terms(kAnySize, kAnySize);
  std::string path = t.logit > limit.logit     ? "the logits (q.k in the storage dtype, rounded "
                                                 "logits or partition maxima)"
                     : t.weight > limit.weight ? "the softmax weights"
                     : t.value > limit.value   ? "the weighted value sum"
                                               : "tiny values";
  throw std::invalid_argument("precision '" + describe() + "' is looser than the loosest model " +
                              "pagecheck accepts ('" + loosest().describe() + "') on " + path);
}

std::string PrecisionModel::describe() const {
  if (is_strict()) return "float32 strict";
  std::string rounded;
  for (const RoundedField& r : kRounded) {
    if (!(this->*r.field)) continue;
    rounded += (rounded.empty() ? "" : "+") + std::string(r.text);
  }
  std::string text = "engine: ";
  if (!rounded.empty()) text += rounded + " rounded";
  const bool sqk = qk == Accum::kStorage, spv = pv == Accum::kStorage;
  if (sqk || spv) {
    if (!rounded.empty()) text += ", ";
    text += storage_sum_terms > 0 ? std::to_string(storage_sum_terms) + "-term storage sums"
                                  : std::string("whole storage sums");
    text += sqk && spv ? " of q.k and P.V" : sqk ? " of q.k" : " of P.V";
  }
  return text;
}

PrecisionModel from_abi(const pc_precision& p) {
  // Fields past the writer's struct_size count as zero (a smaller, older struct).
  auto has = [&](std::size_t offset, std::size_t size) {
    return p.struct_size == 0 || offset + size <= p.struct_size;
  };
  PrecisionModel m;
  if (has(offsetof(pc_precision, qk_accum), sizeof p.qk_accum)) {
    m.qk = static_cast<Accum>(p.qk_accum);
  }
  if (has(offsetof(pc_precision, pv_accum), sizeof p.pv_accum)) {
    m.pv = static_cast<Accum>(p.pv_accum);
  }
  if (has(offsetof(pc_precision, rounded), sizeof p.rounded)) {
    uint32_t known = 0;
    for (const RoundedField& r : kRounded) {
      known |= r.flag;
      m.*r.field = (p.rounded & r.flag) != 0;
    }
    if ((p.rounded & ~known) != 0) {
      throw std::invalid_argument("precision.rounded: unknown PC_ROUND_* bits " +
                                  std::to_string(p.rounded & ~known));
    }
  }
  if (has(offsetof(pc_precision, storage_sum_terms), sizeof p.storage_sum_terms)) {
    m.storage_sum_terms = p.storage_sum_terms;
  }
  m.validate();
  return m;
}

pc_precision to_abi(const PrecisionModel& m) {
  pc_precision p{};
  p.struct_size = sizeof(pc_precision);
  p.qk_accum = static_cast<pc_accum>(m.qk);
  p.pv_accum = static_cast<pc_accum>(m.pv);
  for (const RoundedField& r : kRounded) {
    if (m.*r.field) p.rounded |= r.flag;
  }
  p.storage_sum_terms = m.storage_sum_terms;
  return p;
}

void to_json(nlohmann::json& j, const PrecisionModel& m) {
  std::vector<std::string> rounded;
  for (const RoundedField& r : kRounded) {
    if (m.*r.field) rounded.push_back(r.json);
  }
  j = nlohmann::json{{"qk_accum", accum_name(m.qk)},
                     {"pv_accum", accum_name(m.pv)},
                     {"rounded", rounded},
                     {"storage_sum_terms", m.storage_sum_terms}};
}

void from_json(const nlohmann::json& j, PrecisionModel& m) {
  if (!j.is_object()) throw std::invalid_argument("precision: expected a JSON object");
  m = PrecisionModel{};
  for (const auto& [key, value] : j.items()) {
    if (key == "qk_accum") {
      m.qk = parse_accum(value.get<std::string>());
    } else if (key == "pv_accum") {
      m.pv = parse_accum(value.get<std::string>());
    } else if (key == "storage_sum_terms") {
      m.storage_sum_terms = value.get<int32_t>();
    } else if (key == "rounded") {
      for (const auto& name : value) {
        const std::string text = name.get<std::string>();
        const auto it = std::find_if(std::begin(kRounded), std::end(kRounded),
                                     [&](const RoundedField& r) { return text == r.json; });
        if (it == std::end(kRounded)) {
          throw std::invalid_argument("precision.rounded: unknown intermediate '" + text + "'");
        }
        m.*(it->field) = true;
      }
    } else {
      throw std::invalid_argument("precision: unknown key '" + key + "'");
    }
  }
  m.validate();
}

}  // namespace pagecheck::verify
