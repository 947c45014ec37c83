#pragma once

#include "store/delivery_reads.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Deliveries and their attempts, as the API reads them. Thread-safe: each call borrows a connection
// of the pool.
class PgDeliveryReads final : public DeliveryReads {
 public:
  explicit PgDeliveryReads(PgPool& pool) : pool_(pool) {}

  Result<Delivery> GetDelivery(int64_t id, const Scope& scope) override;
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter, const Page& page,
                                           const Scope& scope) override;
  Result<Listing<Attempt>> ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                        const Scope& scope) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
