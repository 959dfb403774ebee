#pragma once
/// SHA-256 digests (OpenSSL's EVP interface), as lowercase hex.
#include <cstddef>
#include <string>
#include <string_view>

namespace pagecheck::verify {

/// Hex SHA-256 of `size` bytes at `data`.
std::string sha256_hex(const void* data, std::size_t size);
/// Hex SHA-256 of a string's bytes.
inline std::string sha256_hex(std::string_view text) {
  return sha256_hex(text.data(), text.size());
}
/// Hex SHA-256 of a file's bytes; throws std::runtime_error naming the path when unreadable.
std::string sha256_file_hex(const std::string& path);

}  // namespace pagecheck::verify
