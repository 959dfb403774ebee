/// JSON form of specs and variant caps (the worker protocol, reports and artefacts use it).
#include <stdexcept>
#include <string>

#include "pagecheck/registry.h"
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
json pad_json(const CachePadding& p) {
  return json{{"key_block", p.key_block},
              {"key_head", p.key_head},
              {"value_block", p.value_block},
              {"value_head", p.value_head}};
}
CachePadding cache_pad_from(const json& j) {
  return CachePadding{j.at("key_block").get<int64_t>(), j.at("key_head").get<int64_t>(),
                      j.at("value_block").get<int64_t>(), j.at("value_head").get<int64_t>()};
}

/// Seeds travel as decimal strings: JSON numbers above 2^53 lose bits in other tools.
std::string seed_text(uint64_t seed) {
  return std::to_string(seed);
}
uint64_t seed_from(const json& j) {
  if (j.is_string()) return std::stoull(j.get<std::string>());
  return j.get<uint64_t>();
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
           {"max_blocks_per_seq", s.max_blocks_per_seq},
           {"num_blocks", s.num_blocks},
           {"block_table", s.block_table},
           {"table_pad", s.table_pad},
           {"bound_pad", s.bound_pad},
           {"scale", s.scale},
           {"alibi", s.alibi},
           {"query_pad", pad_json(s.query_pad)},
           {"out_pad", pad_json(s.out_pad)},
           {"cache_pad", pad_json(s.cache_pad)},
           {"regime", regime_name(s.regime)},
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
  // Optional: specs written before table padding and loose bounds existed have neither.
  s.table_pad = j.value("table_pad", int64_t{0});
  s.bound_pad = j.value("bound_pad", int64_t{0});
  s.scale = j.at("scale").get<float>();
  s.alibi = j.at("alibi").get<bool>();
  s.query_pad = token_pad_from(j.at("query_pad"));
  s.out_pad = token_pad_from(j.at("out_pad"));
  s.cache_pad = cache_pad_from(j.at("cache_pad"));
  s.regime = parse_regime(j.at("regime").get<std::string>());
  s.content_seed = seed_from(j.at("content_seed"));
}

void to_json(json& j, const CopySpec& s) {
  j = json{{"family", family_name(s.family)},    {"dtype", dtype_name(s.dtype)},
           {"head_size", s.head_size},           {"block_size", s.block_size},
           {"num_kv_heads", s.num_kv_heads},     {"num_blocks", s.num_blocks},
           {"slot_mapping", s.slot_mapping},     {"key_pad", pad_json(s.key_pad)},
           {"value_pad", pad_json(s.value_pad)}, {"cache_pad", pad_json(s.cache_pad)},
           {"regime", regime_name(s.regime)},    {"content_seed", seed_text(s.content_seed)}};
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
  s.cache_pad = cache_pad_from(j.at("cache_pad"));
  s.regime = parse_regime(j.at("regime").get<std::string>());
  s.content_seed = seed_from(j.at("content_seed"));
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

void to_json(json& j, const VariantCaps& c) {
  std::vector<std::string> dtypes;
  for (DType d : c.dtypes) dtypes.emplace_back(dtype_name(d));
  j = json{{"name", c.name},
           {"family", family_name(c.family)},
           {"dtypes", dtypes},
           {"head_sizes", c.head_sizes},
           {"block_sizes", c.block_sizes},
           {"caps", c.caps}};
}

void from_json(const json& j, VariantCaps& c) {
  c.name = j.at("name").get<std::string>();
  c.family = parse_family(j.at("family").get<std::string>());
  c.dtypes.clear();
  for (const auto& d : j.at("dtypes")) c.dtypes.push_back(parse_dtype(d.get<std::string>()));
  c.head_sizes = j.at("head_sizes").get<std::vector<int64_t>>();
  c.block_sizes = j.at("block_sizes").get<std::vector<int64_t>>();
  c.caps = j.at("caps").get<uint32_t>();
}

}  // namespace pagecheck::verify::gen
