#pragma once

// Standard Webhooks signatures recomputed with OpenSSL alone, independent of core/signing,
// so a test checks webhookd's signing against the specification rather than itself.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace webhookd::testing {

inline std::string Base64(const unsigned char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  return out;
}

inline std::string Unbase64(const std::string& text) {
  std::string out(3 * text.size() / 4 + 3, '\0');
  const int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
  if (len < 0) return "";
  size_t size = static_cast<size_t>(len);
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;  // padding
  out.resize(size);
  return out;
}

// The signature the Standard Webhooks spec asks for, computed here with OpenSSL alone.
inline std::string ExpectedSignature(const std::string& secret, const std::string& id,
                                     const std::string& timestamp, const std::string& body) {
  if (secret.rfind("whsec_", 0) != 0) return "not a secret";
  const std::string key = Unbase64(secret.substr(6));
  const std::string signed_text = id + "." + timestamp + "." + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac,
       &mac_len);
  return "v1," + Base64(mac, mac_len);
}

}  // namespace webhookd::testing
