#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/api_key.h"
#include "store/key_store.h"

namespace webhookd {

// Bearer API keys: looked up by their SHA-256, compared in constant time.
class Authenticator {
 public:
  explicit Authenticator(KeyStore& keys) : keys_(keys) {}

  // kUnauthorized with one message for a missing, malformed, unknown or revoked key (so
  // an answer tells a caller nothing about which); kForbidden when the key's role is not
  // `needed` or above; kUnavailable when the database is down.
  Result<void> Check(std::string_view authorization_header, Role needed);

  // For ingest, the hot route: a key seen live within the last minute is not looked up
  // again; its hash is returned instead and the caller must have the store verify it in
  // the ingest's own transaction (NewEvent::verify_key_hash), so a revoked key still
  // gets its 401 at once. Otherwise as Check, and nullopt.
  Result<std::optional<std::string>> CheckOrDefer(std::string_view authorization_header,
                                                  Role needed);

  // Drops a key the store found revoked.
  void Forget(const std::string& key_hash);

 private:
  struct Seen {
    Role role;
    std::chrono::steady_clock::time_point until;
  };

  Result<std::string> HashOf(std::string_view authorization_header);
  Result<void> Lookup(const std::string& hash, Role needed);

  KeyStore& keys_;
  std::mutex mu_;
  std::unordered_map<std::string, Seen> seen_;  // guarded by mu_; hashes of live keys
};

}  // namespace webhookd
