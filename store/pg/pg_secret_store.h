#pragma once

#include "base/secret_box.h"
#include "store/pg/pg_pool.h"
#include "store/secret_store.h"

namespace webhookd::pg {

// The census and re-encryption of stored credentials under `box`. Thread-safe: each call borrows a
// connection of the pool.
class PgSecretStore final : public SecretStore {
 public:
  PgSecretStore(PgPool& pool, const SecretBox& box) : pool_(pool), box_(box) {}

  Result<CredentialCensus> CountCredentials() override;
  Result<int64_t> ReencryptCredentials() override;

 private:
  PgPool& pool_;
  const SecretBox& box_;
};

}  // namespace webhookd::pg
