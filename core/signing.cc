#include "core/signing.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

#include "base/encoding.h"
#include "base/random.h"

namespace webhookd {
namespace {
constexpr size_t kMinSecretBytes = 24;
constexpr size_t kMaxSecretBytes = 64;
constexpr size_t kNewSecretBytes = 32;
}  // namespace

std::string GenerateSecret() {
  return std::string(kSecretPrefix) + Base64Encode(SecureRandomBytes(kNewSecretBytes));
}

Result<std::string> DecodeSecret(std::string_view secret) {
  if (!secret.starts_with(kSecretPrefix)) {
    return Fail(ErrorKind::kInvalid, "secret must start with \"whsec_\"");
  }
  std::optional<std::string> key = Base64Decode(secret.substr(kSecretPrefix.size()));
  if (!key) return Fail(ErrorKind::kInvalid, "secret must be \"whsec_\" followed by base64");
  if (key->size() < kMinSecretBytes || key->size() > kMaxSecretBytes) {
    return Fail(ErrorKind::kInvalid, "secret must encode 24 to 64 bytes");
  }
  return std::move(*key);
}

std::string Sign(std::string_view key, std::string_view id, int64_t unix_seconds,
                 std::string_view body) {
  // The timestamp is signed too, so a captured request cannot be replayed days later.
  std::string message;
  message.reserve(id.size() + body.size() + 24);
  message.append(id);
  message += '.';
  message += std::to_string(unix_seconds);
  message += '.';
  message.append(body);

  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
           &mac_length) == nullptr) {
    abort();  // HMAC-SHA256 cannot fail short of a broken OpenSSL
  }
  return "v1," + Base64Encode(std::string_view(reinterpret_cast<const char*>(mac), mac_length));
}

Result<std::string> SignatureHeader(const std::vector<std::string>& secrets, std::string_view id,
                                    int64_t unix_seconds, std::string_view body) {
  if (secrets.empty()) return Fail(ErrorKind::kInvalid, "no secret");
  std::string header;
  for (size_t i = 0; i < secrets.size(); ++i) {
    const auto key = DecodeSecret(secrets[i]);
    if (!key) {
      if (i == 0) return Propagate(key);
      continue;
    }
    if (!header.empty()) header += ' ';
    header += Sign(*key, id, unix_seconds, body);
  }
  return header;
}

}  // namespace webhookd
