#pragma once

#include "store/operations_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Readiness, gauges and health statistics. Thread-safe: each call borrows a connection of the pool.
class PgOperationsStore final : public OperationsStore {
 public:
  explicit PgOperationsStore(PgPool& pool) : pool_(pool) {}

  Result<bool> Ready() override;
  Result<DeliveryGauges> CountDeliveries() override;
  Result<std::vector<FeedMessageCounts>> CountFeedMessages() override;
  Result<std::vector<std::pair<int64_t, std::string>>> ClientCertificates() override;
  Result<HealthStats> Stats(Duration window) override;
  Result<std::vector<StatsPoint>> StatsSeries(Duration window, Duration step) override;
  Result<std::vector<FailingDestination>> FailingDestinations(Duration window, int limit) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
