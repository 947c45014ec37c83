#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace webhookd {

// Encryption at rest of the credentials webhookd stores (signing secrets, custom header
// values, and any later secret field): AES-256-GCM under WEBHOOKD_ENCRYPTION_KEY, so a
// database dump, a replica or a backup does not hand out the keys to every receiver.
//
// A sealed value is text, so it fits the columns plaintext used:
//   "wse1:" <key id: 8 hex digits of SHA-256(key)> ":" base64(nonce[12] ciphertext tag[16])
// The key id says which key opens it, so values sealed with the previous key still open
// during a key change while `webhookd secrets reencrypt` moves them to the current one.
// Anything without the prefix is plaintext from before a key was set, and opens as is.
//
// Without a key, values are stored as given, and a client may give one that reads like
// sealed data: taken as sealed, it would make start-up refuse to run for everyone (under
// a key id no one has) or open to something else. So a plaintext value that starts
// with either prefix is stored escaped, "wsp1:" <value>: only what Seal encrypted is ever
// read as sealed.
//
// Immutable after construction; thread-safe.
class SecretBox {
 public:
  // `n` random bytes; injected so tests can make sealing repeatable.
  using NonceSource = std::function<std::string(size_t n)>;

  // No key: Seal leaves values as they are (encryption at rest is off).
  SecretBox() = default;
  // `key` and `previous` are 32 raw bytes each (callers check; see Config).
  SecretBox(std::optional<std::string> key, std::optional<std::string> previous,
            NonceSource nonces = nullptr);

  // True when a current key is set: Seal encrypts.
  bool sealing() const { return key_.has_value(); }

  // `plain` sealed with the current key; when there is none, unchanged unless it starts
  // like a sealed or escaped value (then escaped).
  std::string Seal(std::string_view plain) const;

  // The plaintext of a stored value. kInternal when it is sealed under a key this box does
  // not hold, or was altered (the message never includes the value).
  Result<std::string> Open(std::string_view stored) const;

  // Whether `stored` is sealed (under any key), and whether under the current one.
  static bool IsSealed(std::string_view stored);
  // Whether `stored` is its plaintext as it is (neither sealed nor escaped).
  static bool IsPlain(std::string_view stored);
  bool IsCurrent(std::string_view stored) const;

  // The key id a sealed value names ("" for plaintext), and those of this box's keys.
  static std::string_view KeyIdOf(std::string_view stored);
  const std::string& key_id() const { return key_id_; }
  const std::string& previous_key_id() const { return previous_id_; }

 private:
  std::optional<std::string> key_;
  std::optional<std::string> previous_;
  std::string key_id_;
  std::string previous_id_;
  NonceSource nonces_;
};

// The id SecretBox gives a 32-byte key.
std::string EncryptionKeyId(std::string_view key);

}  // namespace webhookd
