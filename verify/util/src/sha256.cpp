#include "pagecheck/verify/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

namespace pagecheck::verify {
namespace {

struct Digest {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Digest() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
      throw std::runtime_error("sha256: EVP_DigestInit_ex failed");
    }
  }
  void update(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx.get(), data, size) != 1) {
      throw std::runtime_error("sha256: EVP_DigestUpdate failed");
    }
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), md.data(), &len) != 1) {
      throw std::runtime_error("sha256: EVP_DigestFinal_ex failed");
    }
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < len; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(const void* data, std::size_t size) {
  Digest d;
  d.update(data, size);
  return d.hex();
}

std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  Digest d;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    d.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return d.hex();
}

}  // namespace pagecheck::verify
