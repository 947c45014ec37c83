#pragma once

#include "store/pg/pg_pool.h"
#include "store/retention_store.h"

namespace webhookd::pg {

// Retention by day, and the purge of what was kept past its day. Thread-safe: each call
// borrows a connection of the pool.
class PgRetentionStore final : public RetentionStore {
 public:
  explicit PgRetentionStore(PgPool& pool) : pool_(pool) {}

  Result<int> AddHistoryDays(int days_ahead) override;
  Result<DroppedDays> DropAgedDays(Timestamp cutoff, int max_days) override;
  Result<int64_t> PurgeExpired(Duration retention, int batch) override;
  Result<std::vector<HistoryPartition>> ListHistoryPartitions(Duration retention) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
