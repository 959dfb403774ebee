/// HDF5 form of the attention features: the feature_* root attributes and the per-head arrays.
#include "problem_attrs.h"

namespace pagecheck::verify::golden {
namespace {

DatasetSpec per_head(const char* name, int64_t num_heads) {
  return array_spec(std::string("inputs/") + name, ElementType::kFloat32, {num_heads});
}

}  // namespace

void write_features(const ref::AttentionFeatures& f, int64_t num_heads, GoldenFile& file) {
  AttrMap& a = file.attrs;
  a["feature_alibi"] = int64_t{f.alibi_slopes.empty() ? 0 : 1};
  a["feature_sinks"] = int64_t{f.sinks.empty() ? 0 : 1};
  a["feature_window"] = f.window;
  a["feature_soft_cap"] = f.soft_cap;
  a["feature_causal"] = int64_t{f.causal ? 1 : 0};
  if (!f.alibi_slopes.empty()) {
    add_dataset(file, per_head("alibi_slopes", num_heads), as_bytes(f.alibi_slopes));
  }
  if (!f.sinks.empty()) add_dataset(file, per_head("sinks", num_heads), as_bytes(f.sinks));
}

ref::AttentionFeatures read_features(GoldenReader& r, int64_t num_heads) {
  ref::AttentionFeatures f;
  f.window = r.integer("feature_window");
  f.soft_cap = r.real("feature_soft_cap");
  f.causal = r.flag("feature_causal");
  if (r.flag("feature_alibi"))
    f.alibi_slopes = r.values<float>(per_head("alibi_slopes", num_heads));
  if (r.flag("feature_sinks")) f.sinks = r.values<float>(per_head("sinks", num_heads));
  return f;
}

}  // namespace pagecheck::verify::golden
