#pragma once

#include "store/erasure_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Erasures of subjects. Thread-safe: each call borrows a connection of the pool.
class PgErasureStore final : public ErasureStore {
 public:
  explicit PgErasureStore(PgPool& pool) : pool_(pool) {}

  Result<Erasure> RequestErasure(const std::string& subject,
                                 const std::optional<std::string>& tenant_id,
                                 const Scope& scope) override;
  Result<Erasure> GetErasure(int64_t id, const Scope& scope) override;
  Result<ErasureRound> RunErasures(int batch, int max_batches) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
