#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/api_key_info.h"

namespace webhookd {

// API keys: only their hashes are stored. Thread-safe; nothing here throws.
class KeyStore {
 public:
  virtual ~KeyStore() = default;
  // A key with a ttl expires that long after now, by the database's clock.
  virtual Result<ApiKeyInfo> CreateApiKey(const NewApiKey& key) = 0;
  // Creates an admin key with this hash, or makes the live key with it an admin key
  // (kLive). A key that was revoked or has expired stays so, and nothing changes.
  enum class Bootstrap { kLive, kRevoked, kExpired };
  virtual Result<Bootstrap> EnsureAdminKey(const std::string& key_hash) = 0;
  virtual Result<std::vector<ApiKeyInfo>> ListApiKeys() = 0;
  virtual Result<void> RevokeApiKey(int64_t id) = 0;  // kNotFound if absent or revoked
  // The live key with this hash: neither revoked nor expired.
  virtual Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) = 0;
};
}  // namespace webhookd
