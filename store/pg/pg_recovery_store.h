#pragma once

#include "store/pg/pg_pool.h"
#include "store/recovery_store.h"

namespace webhookd::pg {

// Recoveries of destinations' dead letters. Thread-safe: each call borrows a connection of
// the pool.
class PgRecoveryStore final : public RecoveryStore {
 public:
  explicit PgRecoveryStore(PgPool& pool) : pool_(pool) {}

  Result<Recovery> RequestRecovery(int64_t destination_id, Timestamp since,
                                   std::optional<Timestamp> until, const Scope& scope) override;
  Result<Recovery> GetRecovery(int64_t id, const Scope& scope) override;
  Result<RecoveryRound> RunRecoveries(const RecoveryPace& pace, int max_pages) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
