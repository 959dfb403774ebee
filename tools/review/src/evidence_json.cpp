/// Verification records as JSON (pagecheck.verification/2): writing, parsing and reading.
#include "pagecheck/bench/identity_fields.h"
#include "pagecheck/bench/json_fields.h"
#include "pagecheck/review/evidence.h"

namespace pagecheck::review {

using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  json_fields::fail<EvidenceError>(where, what);
}
constexpr auto& field = json_fields::field<EvidenceError>;
constexpr auto& get_string = json_fields::get_string<EvidenceError>;
constexpr auto& get_number = json_fields::get_number<EvidenceError>;
constexpr auto& get_bool = json_fields::get_bool<EvidenceError>;
constexpr auto& get_object = json_fields::get_object<EvidenceError>;
constexpr auto& get_array = json_fields::get_array<EvidenceError>;
int64_t get_count(const json& j, const char* key, const std::string& where) {
  return json_fields::get_int<EvidenceError>(j, key, where, 0);
}

/// An object of name -> count (regimes, tags).
std::map<std::string, int64_t> get_counts(const json& j, const char* key,
                                          const std::string& where) {
  const json& o = get_object(j, key, where);
  std::map<std::string, int64_t> out;
  for (const auto& [name, n] : o.items()) out[name] = get_count(o, name.c_str(), where + "." + key);
  return out;
}

PrecisionModel get_precision(const json& j, const std::string& where) {
  const json& p = field(j, "precision", where);
  PrecisionModel m;
  m.name = get_string(p, "name", where + ": precision");
  const json& params = field(p, "parameters", where + ": precision");
  if (!params.is_object()) fail(where, "field 'precision.parameters' must be an object");
  for (const auto& [name, value] : params.items()) {
    m.parameters[name] = get_number(params, name.c_str(), where + ": precision.parameters");
  }
  return m;
}

VariantVerification get_variant(const json& j, const std::string& where) {
  VariantVerification v;
  v.variant = get_string(j, "variant", where);
  v.cases = get_count(j, "cases", where);
  const json& seed = field(j, "seed", where);
  if (!seed.is_number_unsigned()) fail(where, "field 'seed' must be a non-negative integer");
  v.seed = seed.get<uint64_t>();
  v.passed = get_count(j, "passed", where);
  v.failed = get_count(j, "failed", where);
  v.not_supported = get_count(j, "not_supported", where);
  v.precision = get_precision(j, where);
  v.max_ratio = get_number(j, "max_ratio", where);
  v.max_abs = get_number(j, "max_abs", where);
  v.regimes = get_counts(j, "regimes", where);
  v.tags = get_counts(j, "tags", where);
  if (get_bool(j, "quick", where) != v.quick()) {
    fail(where, "field 'quick' disagrees with 'cases' (fewer than " +
                    std::to_string(kDefaultCasesPerVariant) + " is quick)");
  }
  return v;
}

/// The object `key` of a record (`where` receives "<origin>: <key>" for its messages) and its
/// `ran` flag into run.ran: the opening the golden and sanitizer sections share.
template <typename Run>
const json& ran_section(const json& j, const char* key, const std::string& origin,
                        std::string* where, Run* run) {
  *where = origin + ": " + key;
  const json& section = field(j, key, origin);
  run->ran = get_bool(section, "ran", *where);
  return section;
}

GoldenRun get_golden(const json& j, const std::string& origin) {
  GoldenRun run;
  std::string where;
  const json& g = ran_section(j, "golden", origin, &where, &run);
  if (!run.ran) return run;
  run.dir = get_string(g, "dir", where);
  run.goldens = get_count(g, "goldens", where);
  run.exit_status = static_cast<int>(get_count(g, "exit_status", where));
  if (get_bool(g, "passed", where) != run.passed()) {
    fail(where, "field 'passed' disagrees with 'exit_status'");
  }
  return run;
}

SanitizerRun get_sanitizer(const json& j, const std::string& origin) {
  SanitizerRun run;
  std::string where;
  const json& s = ran_section(j, "sanitizer", origin, &where, &run);
  for (const auto& t : get_array(s, "tools", where)) {
    if (!t.is_string() || t.get<std::string>().empty()) fail(where, "tools must be names");
    run.tools.push_back(t.get<std::string>());
  }
  return run;
}

}  // namespace

json to_json(const VerificationRecord& r) {
  json vars = json::array();
  for (const auto& v : r.variants) {
    vars.push_back(
        {{"variant", v.variant},
         {"cases", v.cases},
         {"quick", v.quick()},
         {"seed", v.seed},
         {"passed", v.passed},
         {"failed", v.failed},
         {"not_supported", v.not_supported},
         {"precision", {{"name", v.precision.name}, {"parameters", json(v.precision.parameters)}}},
         {"max_ratio", v.max_ratio},
         {"max_abs", v.max_abs},
         {"regimes", json(v.regimes)},
         {"tags", json(v.tags)}});
  }
  json golden = {{"ran", r.golden.ran}};
  if (r.golden.ran) {
    golden["dir"] = r.golden.dir;
    golden["goldens"] = r.golden.goldens;
    golden["exit_status"] = r.golden.exit_status;
    golden["passed"] = r.golden.passed();
  }
  json out = {
      {"schema", r.schema}, {"device", r.device},
      {"golden", golden},   {"sanitizer", {{"ran", r.sanitizer.ran}, {"tools", r.sanitizer.tools}}},
      {"quick", r.quick()}, {"passed", r.passed()},
      {"variants", vars}};
  identity_fields::write(r, out);
  return out;
}

VerificationRecord verification_record_from_json(const json& j, const std::string& origin) {
  VerificationRecord r;
  r.schema = get_string(j, "schema", origin);
  if (r.schema == kVerificationSchemaV1) {
    fail(origin, std::string("a ") + kVerificationSchemaV1 +
                     " record, which lacks the precision model, errors, tags, goldens, "
                     "sanitizers and dirty flag a review needs: re-record it with `pagecheck "
                     "verify --record` on a GPU");
  }
  if (r.schema != kVerificationSchema) {
    fail(origin, "schema '" + r.schema + "' is not " + kVerificationSchema);
  }
  identity_fields::read<EvidenceError>(j, origin, r);
  r.device = get_string(j, "device", origin);
  r.golden = get_golden(j, origin);
  r.sanitizer = get_sanitizer(j, origin);
  const json& vars = get_array(j, "variants", origin);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    r.variants.push_back(get_variant(vars[i], origin + ": variants[" + std::to_string(i) + "]"));
  }
  r.validate(origin);
  // The stored verdicts are redundant; a record whose verdict disagrees was edited by hand.
  if (get_bool(j, "passed", origin) != r.passed()) {
    fail(origin, "field 'passed' disagrees with the variants' counts");
  }
  if (get_bool(j, "quick", origin) != r.quick()) {
    fail(origin, "field 'quick' disagrees with the variants' case counts");
  }
  return r;
}

VerificationRecord read_verification_record(const std::string& path) {
  return verification_record_from_json(
      json_fields::read_file<EvidenceError>(path, "verification record"), path);
}

}  // namespace pagecheck::review
