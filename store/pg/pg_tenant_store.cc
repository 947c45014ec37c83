#include "store/pg/pg_tenant_store.h"

#include "store/pg/exec.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<TenantListing> PgTenantStore::ListTenants(const TenantPage& page) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<TenantListing> {
    pqxx::nontransaction tx(c);
    TenantListing listing;
    for (const auto& row :
         Exec(tx, sql::kListTenants, Params().Add(page.after_id).Add(page.limit + 1))) {
      listing.items.push_back(TenantSummary{row[0].c_str(), row[1].as<int64_t>(),
                                            row[2].as<int64_t>(), row[3].as<int64_t>()});
    }
    if (static_cast<int>(listing.items.size()) > page.limit) {
      listing.items.resize(page.limit);
      listing.next_after_id = listing.items.back().tenant_id;
    }
    return listing;
  });
}

}  // namespace webhookd::pg
