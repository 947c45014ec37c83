#pragma once

#include "base/result.h"
#include "core/tenant.h"

namespace webhookd {

// The tenants the rows name (a tenant needs no registration: it exists while a
// destination or an event carries its id). Thread-safe; nothing here throws.
class TenantStore {
 public:
  virtual ~TenantStore() = default;
  // In tenant_id order (there is no creation time to sort by), with each one's counts.
  virtual Result<TenantListing> ListTenants(const TenantPage& page) = 0;
};

}  // namespace webhookd
