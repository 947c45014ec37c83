// Standard Webhooks signature checking, written apart from core/signing.cc on purpose: a
// receiver that shared webhookd's signing code would agree with any mistake in it.
#ifndef WEBHOOKD_BENCH_WEBHOOK_SIGNATURE_H_
#define WEBHOOKD_BENCH_WEBHOOK_SIGNATURE_H_

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <optional>
#include <string>
#include <string_view>

namespace webhookd::bench {

// The key of a "whsec_<base64>" secret, or nullopt if it is not one.
inline std::optional<std::string> SecretKey(std::string_view secret) {
  constexpr std::string_view kPrefix = "whsec_";
  if (!secret.starts_with(kPrefix)) return std::nullopt;
  std::string text(secret.substr(kPrefix.size()));
  while (text.size() % 4 != 0) text += '=';
  std::string key(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(key.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0 || text.empty()) return std::nullopt;
  // The decoder counts the padding as zero bytes.
  const size_t padding = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  key.resize(static_cast<size_t>(n) - padding);
  return key;
}

// True if any "v1,<base64>" entry of the space-separated `signatures` is the HMAC-SHA256
// of "<id>.<timestamp>.<body>" under `key`.
inline bool SignatureMatches(std::string_view key, std::string_view id, std::string_view timestamp,
                             std::string_view body, std::string_view signatures) {
  std::string message;
  message.reserve(id.size() + timestamp.size() + body.size() + 2);
  message.append(id).append(".").append(timestamp).append(".").append(body);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
           &mac_length) == nullptr) {
    return false;
  }
  unsigned char expected[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const size_t expected_length = static_cast<size_t>(EVP_EncodeBlock(expected, mac, mac_length));

  bool matched = false;
  while (!signatures.empty()) {
    const size_t space = signatures.find(' ');
    const std::string_view entry = signatures.substr(0, space);
    signatures = space == std::string_view::npos ? "" : signatures.substr(space + 1);
    if (!entry.starts_with("v1,")) continue;  // other schemes may come and go beside v1
    const std::string_view given = entry.substr(3);
    // Constant time in the bytes compared, so timing does not tell how much was right.
    if (given.size() == expected_length &&
        CRYPTO_memcmp(given.data(), expected, expected_length) == 0) {
      matched = true;
    }
  }
  return matched;
}

}  // namespace webhookd::bench

#endif  // WEBHOOKD_BENCH_WEBHOOK_SIGNATURE_H_
