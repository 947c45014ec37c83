#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/api_key.h"
#include "core/role.h"
#include "core/scope.h"
#include "store/key_store.h"

namespace webhookd {

// Who may use a route: admin keys always; publisher keys unless `role` is kAdmin; tenant
// keys only where `tenant_ok`, and there they see their own tenant's rows alone.
struct Access {
  Role role = Role::kPublisher;
  bool tenant_ok = false;
};

// Bearer API keys: looked up by their SHA-256 in the store, never compared. A lookup by
// hash needs no constant-time compare: the secret never meets a comparison whose timing
// depends on it, only its hash (a hash-table or index lookup) does, and learning a prefix
// of a hash tells nothing about the key.
class Authenticator {
 public:
  explicit Authenticator(KeyStore& keys) : keys_(keys) {}

  // What the key may see (a tenant key: its tenant alone). kUnauthorized with one message
  // for a missing, malformed, unknown, expired or revoked key (so an answer tells a caller
  // nothing about which); kForbidden when `access` does not admit the key's role;
  // kUnavailable when the database is down.
  Result<Scope> Check(std::string_view authorization_header, Access access);

  // A check the caller finishes: when `key_hash` is set, the store must verify that key
  // in the ingest's own transaction (NewEvent::verify_key_hash).
  struct Deferred {
    Scope scope;
    std::optional<std::string> key_hash;
  };
  // For ingest, the hot route: a key seen live within the last minute is not looked up
  // again; its hash is returned instead, so a revoked or expired key still gets its 401
  // at once. Otherwise as Check, with no hash.
  Result<Deferred> CheckOrDefer(std::string_view authorization_header, Access access);
  // CheckOrDefer's answer when it needs no lookup (the key was seen live within the last
  // minute and its role is admitted), else nullopt: never waits on the store.
  std::optional<Deferred> DeferIfSeen(std::string_view authorization_header, Access access);

  // Whether the key was found live within the last minute, asked without the store: the
  // keys that pass while their address is over its failed-authentication limit.
  bool RecentlyLive(std::string_view authorization_header);

  // Drops a key the store found revoked.
  void Forget(const std::string& key_hash);

  // The SHA-256 of the header's bearer key (what the store finds a key by); kUnauthorized
  // for a header that carries none.
  static Result<std::string> KeyHashOf(std::string_view authorization_header);

 private:
  struct Seen {
    Role role;
    Scope scope;
    std::chrono::steady_clock::time_point until;
  };

  static Result<std::string> HashOf(std::string_view authorization_header) {
    return KeyHashOf(authorization_header);
  }
  Result<Scope> Lookup(const std::string& hash, Access access);

  KeyStore& keys_;
  std::mutex mu_;
  std::unordered_map<std::string, Seen> seen_;  // guarded by mu_; hashes of live keys
};

}  // namespace webhookd
