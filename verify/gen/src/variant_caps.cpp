/// Variant caps from the registry or by hand, and their JSON form.
#include "pagecheck/verify/gen/variant_caps.h"

#include <algorithm>
#include <stdexcept>

#include "pagecheck/registry.h"

namespace pagecheck::verify::gen {
namespace {

using nlohmann::json;

/// The enum values whose bit is set in `mask`, in enum order.
template <typename Enum>
std::vector<Enum> from_mask(uint32_t mask, std::initializer_list<Enum> all) {
  std::vector<Enum> out;
  for (Enum e : all) {
    if (mask & (1u << static_cast<unsigned>(e))) out.push_back(e);
  }
  return out;
}

std::vector<DType> every_dtype() {
  std::vector<DType> all;
  for (const DTypeInfo& row : all_dtypes()) all.push_back(row.dtype);
  return all;
}

std::vector<DType> dtypes_in(uint32_t mask) {
  std::vector<DType> out;
  for (DType d : every_dtype()) {
    if (mask & (1u << static_cast<unsigned>(d))) out.push_back(d);
  }
  return out;
}

const char* context0_name(pc_context0 c) {
  switch (c) {
    case PC_CONTEXT0_UNSUPPORTED:
      return "unsupported";
    case PC_CONTEXT0_UNTOUCHED:
      return "untouched";
    case PC_CONTEXT0_ZEROS:
      return "zeros";
  }
  return "unknown";
}

pc_context0 parse_context0(const std::string& text) {
  for (pc_context0 c : {PC_CONTEXT0_UNSUPPORTED, PC_CONTEXT0_UNTOUCHED, PC_CONTEXT0_ZEROS}) {
    if (text == context0_name(c)) return c;
  }
  throw std::invalid_argument("context0: unknown value '" + text +
                              "' (expected unsupported, untouched or zeros)");
}

/// The PC_CAP_* flags and their names, in bit order.
const std::vector<std::pair<uint64_t, const char*>>& cap_table() {
  static const std::vector<std::pair<uint64_t, const char*>> table{
      {PC_CAP_ALIBI, "alibi"},
      {PC_CAP_LARGE_CACHE, "large_cache"},
      {PC_CAP_TOKEN_STRIDE, "token_stride"},
      {PC_CAP_HEAD_STRIDE, "head_stride"},
      {PC_CAP_STRIDED_OUTPUT, "strided_output"},
      {PC_CAP_CACHE_PAD_SHARED, "cache_pad_shared"},
      {PC_CAP_CACHE_PAD, "cache_pad"},
      {PC_CAP_COMBINED_KV, "combined_kv"},
      {PC_CAP_SINKS, "sinks"},
      {PC_CAP_WINDOW, "window"},
      {PC_CAP_SOFT_CAP, "soft_cap"},
      {PC_CAP_NON_CAUSAL, "non_causal"},
      {PC_CAP_DEQUANTIZE, "dequantize"},
      {PC_CAP_FULL_RANGE, "full_range"},
  };
  return table;
}

}  // namespace

std::vector<DType> VariantCaps::kv_dtypes_for(DType dtype) const {
  if (kv_dtypes.empty()) return {dtype};
  std::vector<DType> out;
  for (DType kv : kv_dtypes) {
    if (kv == dtype || dtype_info(kv).fp8) out.push_back(kv);
  }
  return out;
}

void VariantCaps::validate() const {
  const std::string where = "variant '" + name + "'";
  if (dtypes.empty()) throw std::invalid_argument(where + " declares no dtype");
  if (head_sizes.empty()) throw std::invalid_argument(where + " declares no head size");
  if (block_sizes.empty()) throw std::invalid_argument(where + " declares no block size");
  if (cache_kinds.empty()) throw std::invalid_argument(where + " declares no cache kind");
  for (int64_t h : head_sizes) {
    if (h <= 0 || h % 8 != 0) {
      throw std::invalid_argument(where + " declares head size " + std::to_string(h) +
                                  ", not a positive multiple of 8");
    }
  }
  for (int64_t b : block_sizes) {
    if (b <= 0) throw std::invalid_argument(where + " declares block size " + std::to_string(b));
  }
  for (int64_t p : partition_sizes) {
    if (p <= 0) {
      throw std::invalid_argument(where + " declares partition size " + std::to_string(p));
    }
  }
  const bool some_kv = std::any_of(dtypes.begin(), dtypes.end(),
                                   [this](DType d) { return !kv_dtypes_for(d).empty(); });
  if (!some_kv) {
    throw std::invalid_argument(where + " declares no cache dtype usable with its token dtypes");
  }
}

VariantCaps caps_of(const VariantInfo& info) {
  const pc_variant& v = info.variant;
  VariantCaps c;
  c.name = info.name;
  c.family = v.family;
  c.dtypes = dtypes_in(v.dtype_mask);
  if (v.kv_dtype_mask != 0) c.kv_dtypes = dtypes_in(v.kv_dtype_mask);
  if (v.cache_kind_mask != 0) {
    c.cache_kinds = from_mask(
        v.cache_kind_mask, {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND});
  }
  c.scale_kinds =
      from_mask(v.scale_kind_mask, {ref::ScaleKind::kPerTensor, ref::ScaleKind::kPerKvHead});
  c.head_sizes.assign(info.head_sizes.begin(), info.head_sizes.end());
  c.block_sizes.assign(info.block_sizes.begin(), info.block_sizes.end());
  c.caps = v.caps;
  c.max_query_len = info.max_query_len();
  c.partition_sizes.assign(info.partition_sizes.begin(), info.partition_sizes.end());
  c.context0 = v.context0;
  c.nondeterministic = info.nondeterministic();
  c.precision = v.precision;
  return c;
}

VariantCaps make_caps(std::string name, pc_family family, std::vector<int64_t> head_sizes,
                      std::vector<int64_t> block_sizes, uint64_t caps) {
  VariantCaps c;
  c.name = std::move(name);
  c.family = family;
  for (const DTypeInfo& row : all_dtypes()) {
    if (row.query_dtype) c.dtypes.push_back(row.dtype);
  }
  c.head_sizes = std::move(head_sizes);
  c.block_sizes = std::move(block_sizes);
  c.caps = caps;
  return c;
}

std::vector<std::string> cap_names(uint64_t caps) {
  std::vector<std::string> out;
  uint64_t known = 0;
  for (const auto& [flag, text] : cap_table()) {
    known |= flag;
    if (caps & flag) out.emplace_back(text);
  }
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t flag = uint64_t{1} << bit;
    if ((caps & flag) && !(known & flag)) out.push_back("bit " + std::to_string(bit));
  }
  return out;
}

void to_json(json& j, const VariantCaps& c) {
  const auto names = [](const std::vector<DType>& ds) {
    std::vector<std::string> out;
    for (DType d : ds) out.emplace_back(dtype_name(d));
    return out;
  };
  std::vector<std::string> kinds, scales;
  for (ref::CacheKind k : c.cache_kinds) kinds.emplace_back(ref::cache_kind_name(k));
  for (ref::ScaleKind k : c.scale_kinds) scales.emplace_back(ref::scale_kind_name(k));
  j = json{{"name", c.name},
           {"family", family_name(c.family)},
           {"dtypes", names(c.dtypes)},
           {"kv_dtypes", names(c.kv_dtypes)},
           {"cache_kinds", kinds},
           {"scale_kinds", scales},
           {"head_sizes", c.head_sizes},
           {"block_sizes", c.block_sizes},
           {"caps", c.caps},
           {"cap_names", cap_names(c.caps)},
           {"max_query_len", c.max_query_len},
           {"partition_sizes", c.partition_sizes},
           {"context0", context0_name(c.context0)},
           {"nondeterministic", c.nondeterministic},
           {"precision", json{{"qk_accum", static_cast<int>(c.precision.qk_accum)},
                              {"pv_accum", static_cast<int>(c.precision.pv_accum)},
                              {"rounded", c.precision.rounded},
                              {"storage_sum_terms", c.precision.storage_sum_terms}}}};
}

void from_json(const json& j, VariantCaps& c) {
  const auto dtypes = [](const json& list) {
    std::vector<DType> out;
    for (const auto& d : list) out.push_back(parse_dtype(d.get<std::string>()));
    return out;
  };
  c.name = j.at("name").get<std::string>();
  c.family = parse_family(j.at("family").get<std::string>());
  c.dtypes = dtypes(j.at("dtypes"));
  c.kv_dtypes = dtypes(j.value("kv_dtypes", json::array()));
  c.cache_kinds.clear();
  for (const auto& k : j.value("cache_kinds", json::array({"x_split"}))) {
    c.cache_kinds.push_back(ref::parse_cache_kind(k.get<std::string>().c_str()));
  }
  c.scale_kinds.clear();
  for (const auto& k : j.value("scale_kinds", json::array())) {
    c.scale_kinds.push_back(ref::parse_scale_kind(k.get<std::string>().c_str()));
  }
  c.head_sizes = j.at("head_sizes").get<std::vector<int64_t>>();
  c.block_sizes = j.at("block_sizes").get<std::vector<int64_t>>();
  c.caps = j.at("caps").get<uint64_t>();
  c.max_query_len = j.value("max_query_len", int64_t{1});
  c.partition_sizes = j.value("partition_sizes", std::vector<int64_t>{});
  c.context0 = parse_context0(j.value("context0", std::string("unsupported")));
  c.nondeterministic = j.value("nondeterministic", false);
  c.precision = pc_precision{};
  c.precision.struct_size = sizeof(pc_precision);
  if (j.contains("precision")) {
    const json& p = j.at("precision");
    c.precision.qk_accum = static_cast<pc_accum>(p.value("qk_accum", 0));
    c.precision.pv_accum = static_cast<pc_accum>(p.value("pv_accum", 0));
    c.precision.rounded = p.value("rounded", uint32_t{0});
    c.precision.storage_sum_terms = p.value("storage_sum_terms", int32_t{0});
  }
}

}  // namespace pagecheck::verify::gen
