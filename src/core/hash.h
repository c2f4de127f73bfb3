#pragma once
#include <string>
#include <string_view>

namespace kforge {

/// Lower-case hex SHA-256 of the bytes (OpenSSL's implementation).
std::string Sha256Hex(std::string_view data);

}  // namespace kforge
