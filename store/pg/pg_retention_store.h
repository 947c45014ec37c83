#pragma once

#include "store/pg/pg_pool.h"
#include "store/retention_store.h"

namespace webhookd::pg {

// The retention purge. Thread-safe: each call borrows a connection of the pool.
class PgRetentionStore final : public RetentionStore {
 public:
  explicit PgRetentionStore(PgPool& pool) : pool_(pool) {}

  Result<int64_t> PurgeExpired(Duration retention, int batch) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
