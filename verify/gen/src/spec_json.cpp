/// JSON form of specs and variant caps (the worker protocol, reports and artefacts use it).
/// Every field is written; fields added after a spec version was first written are optional on
/// reading (their defaults describe what older specs meant), so old reproduce strings replay.
#include <stdexcept>
#include <string>

#include "pagecheck/registry.h"
#include "pagecheck/verify/decimal_u64.h"
#include "pagecheck/verify/gen/spec.h"
#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::verify::gen {
namespace {

using nlohmann::json;

json pad_json(const TokenPadding& p) {
  return json{{"token", p.token}, {"head", p.head}};
}
TokenPadding token_pad_from(const json& j) {
  return TokenPadding{j.at("token").get<int64_t>(), j.at("head").get<int64_t>()};
}
json pad_json(const ref::TensorPadding& p) {
  return json{{"block", p.block}, {"head", p.head}, {"slot", p.slot}};
}
ref::TensorPadding tensor_pad_from(const json& j) {
  return ref::TensorPadding{j.at("block").get<int64_t>(), j.at("head").get<int64_t>(),
                            j.value("slot", int64_t{0})};
}

json cache_json(const CacheSpec& c) {
  return json{{"kind", ref::cache_kind_name(c.kind)},
              {"kv_dtype", dtype_name(c.kv_dtype)},
              {"scale_kind", ref::scale_kind_name(c.scale_kind)},
              {"k_scale", c.k_scale},
              {"v_scale", c.v_scale},
              {"combined", c.combined},
              {"pad", json{{"key", pad_json(c.pad.key)}, {"value", pad_json(c.pad.value)}}}};
}

/// The cache of a spec: the "cache" object, or (specs written before it existed) the packed
/// x-split cache of the spec's dtype with the old "cache_pad" {key_block, key_head,
/// value_block, value_head} object.
CacheSpec cache_from(const json& j, DType dtype) {
  CacheSpec c;
  c.kv_dtype = dtype;
  if (!j.contains("cache")) {
    const json& old = j.at("cache_pad");
    c.pad.key = {old.at("key_block").get<int64_t>(), old.at("key_head").get<int64_t>(), 0};
    c.pad.value = {old.at("value_block").get<int64_t>(), old.at("value_head").get<int64_t>(), 0};
    return c;
  }
  const json& cj = j.at("cache");
  c.kind = ref::parse_cache_kind(cj.value("kind", std::string("x_split")).c_str());
  if (cj.contains("kv_dtype")) c.kv_dtype = parse_dtype(cj.at("kv_dtype").get<std::string>());
  c.scale_kind = ref::parse_scale_kind(cj.value("scale_kind", std::string("none")).c_str());
  c.k_scale = cj.value("k_scale", std::vector<float>{});
  c.v_scale = cj.value("v_scale", std::vector<float>{});
  c.combined = cj.value("combined", false);
  if (cj.contains("pad")) {
    c.pad.key = tensor_pad_from(cj.at("pad").at("key"));
    c.pad.value = tensor_pad_from(cj.at("pad").at("value"));
  }
  return c;
}

/// Seeds travel as decimal strings: JSON numbers above 2^53 lose bits in other tools.
std::string seed_text(uint64_t seed) {
  return std::to_string(seed);
}
/// A spec's seed: a decimal string by the one rule of decimal_u64.h (no sign: "-1" is not
/// 2^64-1), or a JSON number that fits a u64.
uint64_t seed_from(const json& j, const char* field) {
  if (!j.is_string()) return j.get<uint64_t>();
  return decimal_u64_or_throw(j.get<std::string>(), std::string("spec JSON: ") + field);
}

}  // namespace

void to_json(json& j, const AttentionSpec& s) {
  j = json{{"family", "paged_attention"},
           {"dtype", dtype_name(s.dtype)},
           {"head_size", s.head_size},
           {"block_size", s.block_size},
           {"num_seqs", s.num_seqs},
           {"num_heads", s.num_heads},
           {"num_kv_heads", s.num_kv_heads},
           {"context_lens", s.context_lens},
           {"query_lens", s.query_lens},
           {"max_blocks_per_seq", s.max_blocks_per_seq},
           {"num_blocks", s.num_blocks},
           {"block_table", s.block_table},
           {"table_pad", s.table_pad},
           {"bound_pad", s.bound_pad},
           {"scale", s.scale},
           {"alibi", s.alibi},
           {"sinks", s.sinks},
           {"window", s.window},
           {"soft_cap", s.soft_cap},
           {"causal", s.causal},
           {"query_pad", pad_json(s.query_pad)},
           {"out_pad", pad_json(s.out_pad)},
           {"cache", cache_json(s.cache)},
           {"regime", regime_name(s.regime)},
           {"extreme_partition", s.extreme_partition},
           {"content_seed", seed_text(s.content_seed)}};
}

void from_json(const json& j, AttentionSpec& s) {
  s.dtype = parse_dtype(j.at("dtype").get<std::string>());
  s.head_size = j.at("head_size").get<int64_t>();
  s.block_size = j.at("block_size").get<int64_t>();
  s.num_seqs = j.at("num_seqs").get<int64_t>();
  s.num_heads = j.at("num_heads").get<int64_t>();
  s.num_kv_heads = j.at("num_kv_heads").get<int64_t>();
  s.context_lens = j.at("context_lens").get<std::vector<int32_t>>();
  s.max_blocks_per_seq = j.at("max_blocks_per_seq").get<int64_t>();
  s.num_blocks = j.at("num_blocks").get<int64_t>();
  s.block_table = j.at("block_table").get<std::vector<int32_t>>();
  // Optional: older specs have no table padding, loose bound, multi-token queries or features.
  s.table_pad = j.value("table_pad", int64_t{0});
  s.bound_pad = j.value("bound_pad", int64_t{0});
  s.query_lens = j.value("query_lens", std::vector<int32_t>{});
  s.scale = j.at("scale").get<float>();
  s.alibi = j.at("alibi").get<bool>();
  s.sinks = j.value("sinks", std::vector<float>{});
  s.window = j.value("window", int64_t{0});
  s.soft_cap = j.value("soft_cap", 0.0f);
  s.causal = j.value("causal", true);
  s.query_pad = token_pad_from(j.at("query_pad"));
  s.out_pad = token_pad_from(j.at("out_pad"));
  s.cache = cache_from(j, s.dtype);
  s.regime = parse_regime(j.at("regime").get<std::string>());
  s.extreme_partition = j.value("extreme_partition", int64_t{0});
  s.content_seed = seed_from(j.at("content_seed"), "content_seed");
}

void to_json(json& j, const CopySpec& s) {
  j = json{{"family", family_name(s.family)},
           {"dtype", dtype_name(s.dtype)},
           {"head_size", s.head_size},
           {"block_size", s.block_size},
           {"num_kv_heads", s.num_kv_heads},
           {"num_blocks", s.num_blocks},
           {"slot_mapping", s.slot_mapping},
           {"key_pad", pad_json(s.key_pad)},
           {"value_pad", pad_json(s.value_pad)},
           {"cache", cache_json(s.cache)},
           {"dequantize", s.dequantize},
           {"regime", regime_name(s.regime)},
           {"content_seed", seed_text(s.content_seed)}};
}

void from_json(const json& j, CopySpec& s) {
  s.family = parse_family(j.at("family").get<std::string>());
  s.dtype = parse_dtype(j.at("dtype").get<std::string>());
  s.head_size = j.at("head_size").get<int64_t>();
  s.block_size = j.at("block_size").get<int64_t>();
  s.num_kv_heads = j.at("num_kv_heads").get<int64_t>();
  s.num_blocks = j.at("num_blocks").get<int64_t>();
  s.slot_mapping = j.at("slot_mapping").get<std::vector<int64_t>>();
  s.key_pad = token_pad_from(j.at("key_pad"));
  s.value_pad = token_pad_from(j.at("value_pad"));
  s.cache = cache_from(j, s.dtype);
  s.dequantize = j.value("dequantize", false);
  s.regime = parse_regime(j.at("regime").get<std::string>());
  s.content_seed = seed_from(j.at("content_seed"), "content_seed");
}

json spec_to_json(const CaseSpec& spec) {
  return std::visit([](const auto& s) { return json(s); }, spec);
}

CaseSpec spec_from_json(const json& j) {
  try {
    const pc_family family = parse_family(j.at("family").get<std::string>());
    if (family == PC_FAMILY_PAGED_ATTENTION) return j.get<AttentionSpec>();
    return j.get<CopySpec>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("spec JSON: ") + e.what());
  }
}

}  // namespace pagecheck::verify::gen
