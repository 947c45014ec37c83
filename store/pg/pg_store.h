#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/pg/pg_pool.h"
#include "store/store.h"

namespace webhookd::pg {

// The Store on PostgreSQL. Thread-safe: each call borrows a pooled connection.
class PgStore final : public Store {
 public:
  // `pool_size` connections serve the calls; ingest without an idempotency key or a target
  // destination additionally goes through `committers` group-commit connections.
  PgStore(std::string url, int pool_size, int committers = 2);
  ~PgStore() override;

  // Store:
  Result<bool> Ready() override;
  Result<ApiKeyInfo> CreateApiKey(const std::string& name, Role role,
                                  const std::string& key_hash) override;
  Result<void> EnsureAdminKey(const std::string& key_hash) override;
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override;
  Result<void> RevokeApiKey(int64_t id) override;
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) override;
  Result<Destination> CreateDestination(const Destination& d) override;
  Result<Destination> GetDestination(int64_t id) override;
  Result<Listing<Destination>> ListDestinations(const Page& page) override;
  Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields) override;
  Result<void> DeleteDestination(int64_t id) override;
  Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                    const std::optional<IdempotencyKey>& key) override;
  Result<Event> GetEvent(int64_t id) override;
  Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page) override;
  Result<Delivery> GetDelivery(int64_t id) override;
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter, const Page& page) override;
  Result<std::vector<Attempt>> ListAttempts(int64_t delivery_id) override;
  Result<std::vector<ClaimedDelivery>> ClaimDue(int limit, Duration lease,
                                                int default_cap) override;
  Result<std::vector<int64_t>> RecordOutcomes(std::span<const AttemptRecord> records) override;
  Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) override;
  Result<int> RequeueExpiredLeases() override;
  Result<std::optional<Timestamp>> NextDueAt() override;
  Result<std::unique_ptr<WakeupListener>> Listen() override;
  Result<DeliveryGauges> CountDeliveries() override;
  Result<HealthStats> Stats(Duration window) override;
  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter,
                                              const Page& page) override;
  Result<int64_t> ReplayDeadLetter(int64_t id) override;
  Result<int64_t> ReplayDeadLetters(const DeadLetterFilter& filter) override;

 private:
  template <typename F>
  auto Run(F&& body) -> decltype(body(std::declval<pqxx::connection&>()));
  template <typename F>
  auto RunOn(PgPool& pool, F&& body) -> decltype(body(std::declval<pqxx::connection&>()));

  struct PendingIngest;
  // Group commit: concurrent ingests share one transaction and one fsync; each caller
  // gets its answer only after that commit.
  Result<IngestReceipt> InsertEventGrouped(const NewEvent& event);
  void CommitLoop();
  void CommitGroup(std::vector<PendingIngest*>& group);

  PgPool pool_;
  PgPool commit_pool_;
  PgPool worker_pool_;  // the claim loop, the outcome writers and the lease sweeper
  int committers_count_;
  std::once_flag committers_started_;
  std::mutex ingest_mu_;
  std::condition_variable ingest_cv_;
  std::deque<PendingIngest*> ingest_queue_;
  bool ingest_stop_ = false;
  std::vector<std::thread> committers_;
};

}  // namespace webhookd::pg
