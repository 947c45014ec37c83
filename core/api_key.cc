#include "core/api_key.h"

#include <openssl/crypto.h>

#include "base/encoding.h"
#include "base/random.h"

namespace webhookd {
namespace {
constexpr std::string_view kApiKeyPrefix = "whk_";
constexpr size_t kApiKeyBytes = 32;
}  // namespace

std::string GenerateApiKey() {
  // base64url without padding: a key survives shells, URLs and headers unquoted.
  std::string encoded = Base64Encode(SecureRandomBytes(kApiKeyBytes));
  while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
  for (char& c : encoded) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return std::string(kApiKeyPrefix) + encoded;
}

std::string HashApiKey(std::string_view key) { return HexEncode(Sha256(key)); }

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace webhookd
