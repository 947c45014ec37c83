#include "store/pg/pg_retention_store.h"

#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<int64_t> PgRetentionStore::PurgeExpired(Duration retention, int batch) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    // Maintenance, not a request: WEBHOOKD_STATEMENT_TIMEOUT does not bound it.
    Exec(tx, sql::kLiftStatementTimeout);
    if (!Exec(tx, sql::kTryPurgeLock, Params().Add(kPurgeLock))[0][0].as<bool>()) return 0;
    Exec(tx, sql::kPurgeIdempotencyKeys);
    Exec(tx, sql::kEraseExpiredSecrets, Params().AddNull());
    if (retention <= Duration::zero()) {
      tx.commit();
      return 0;
    }
    auto r = Exec(tx, sql::kPurgeExpiredEvents,
                  Params().Add(static_cast<int64_t>(retention.count())).Add(batch));
    tx.commit();
    return r[0][0].as<int64_t>();
  });
}

}  // namespace webhookd::pg
