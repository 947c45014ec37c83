#pragma once

#include <string>
#include <string_view>

namespace webhookd {

// A new API key: "whk_" + 43 base64url characters (32 random bytes).
std::string GenerateApiKey();

// What the database stores instead of a key: lowercase hex SHA-256.
std::string HashApiKey(std::string_view key);

// Compares in time independent of where the inputs differ (CRYPTO_memcmp).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace webhookd
