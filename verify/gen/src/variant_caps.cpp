/// Variant caps from the registry or by hand.
#include "pagecheck/verify/gen/variant_caps.h"

#include <stdexcept>

#include "pagecheck/registry.h"

namespace pagecheck::verify::gen {

void VariantCaps::validate() const {
  const std::string where = "variant '" + name + "'";
  if (dtypes.empty()) throw std::invalid_argument(where + " declares no dtype");
  if (head_sizes.empty()) throw std::invalid_argument(where + " declares no head size");
  if (block_sizes.empty()) throw std::invalid_argument(where + " declares no block size");
  for (int64_t h : head_sizes) {
    if (h <= 0 || h % 8 != 0) {
      throw std::invalid_argument(where + " declares head size " + std::to_string(h) +
                                  ", not a positive multiple of 8");
    }
  }
  for (int64_t b : block_sizes) {
    if (b <= 0) throw std::invalid_argument(where + " declares block size " + std::to_string(b));
  }
}

VariantCaps caps_of(const VariantInfo& info) {
  VariantCaps c;
  c.name = info.name;
  c.family = info.variant.family;
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    if (info.variant.dtype_mask & (1u << static_cast<unsigned>(d))) c.dtypes.push_back(d);
  }
  c.head_sizes.assign(info.head_sizes.begin(), info.head_sizes.end());
  c.block_sizes.assign(info.block_sizes.begin(), info.block_sizes.end());
  c.caps = info.variant.caps;
  return c;
}

VariantCaps make_caps(std::string name, pc_family family, std::vector<int64_t> head_sizes,
                      std::vector<int64_t> block_sizes, uint32_t caps) {
  VariantCaps c;
  c.name = std::move(name);
  c.family = family;
  c.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  c.head_sizes = std::move(head_sizes);
  c.block_sizes = std::move(block_sizes);
  c.caps = caps;
  return c;
}

}  // namespace pagecheck::verify::gen
