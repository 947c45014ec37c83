#pragma once

#include "store/key_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// API keys. Thread-safe: each call borrows a connection of the pool.
class PgKeyStore final : public KeyStore {
 public:
  explicit PgKeyStore(PgPool& pool) : pool_(pool) {}

  Result<ApiKeyInfo> CreateApiKey(const NewApiKey& key) override;
  Result<Bootstrap> EnsureAdminKey(const std::string& key_hash) override;
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override;
  Result<void> RevokeApiKey(int64_t id) override;
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
