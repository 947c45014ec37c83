#pragma once

#include "store/pg/pg_pool.h"
#include "store/tenant_store.h"

namespace webhookd::pg {

// Tenants, as their destinations and events name them. Thread-safe: each call borrows a connection
// of the pool.
class PgTenantStore final : public TenantStore {
 public:
  explicit PgTenantStore(PgPool& pool) : pool_(pool) {}

  Result<TenantListing> ListTenants(const TenantPage& page) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
