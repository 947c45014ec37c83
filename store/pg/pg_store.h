#pragma once

#include <memory>
#include <string>

#include "base/secret_box.h"
#include "store/pg/committer.h"
#include "store/pg/errors.h"
#include "store/pg/exec.h"
#include "store/pg/pg_pool.h"
#include "store/store.h"

namespace webhookd::pg {

// The Store on PostgreSQL. Thread-safe: each call borrows a pooled connection.
class PgStore final : public Store {
 public:
  struct Options {
    // Connections for API and command calls, each borrowed for one call.
    int api_connections = 16;
    // How long an API call waits for one of them before it fails as unavailable (503),
    // so a flood of requests cannot queue without bound behind a slow database.
    std::chrono::milliseconds api_acquire_timeout{2000};
    // WEBHOOKD_STATEMENT_TIMEOUT on each statement of the API and group-commit
    // connections (zero: none); the retention purge lifts it for its own transactions.
    std::chrono::milliseconds api_statement_timeout{0};
    // Group-commit connections (and threads) for un-keyed, untargeted ingest; 0 sends
    // every ingest through the API connections.
    int committers = 2;
    // Connections for the worker: its claim loop (which also sweeps leases and releases
    // claims) and each of its outcome recorders.
    int worker_connections = 3;
    // Seals credentials on the way in and opens them on the way out; without a key
    // they are stored as given.
    SecretBox secrets{};
  };

  PgStore(const std::string& url, Options options);
  ~PgStore() override;

  // Store:
  Result<bool> Ready() override;
  Result<ApiKeyInfo> CreateApiKey(const NewApiKey& key) override;
  Result<Bootstrap> EnsureAdminKey(const std::string& key_hash) override;
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override;
  Result<void> RevokeApiKey(int64_t id) override;
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) override;
  Result<Destination> CreateDestination(const Destination& d, int max_per_tenant) override;
  Result<Destination> GetDestination(int64_t id, const Scope& scope) override;
  Result<Listing<Destination>> ListDestinations(const DestinationFilter& filter, const Page& page,
                                                const Scope& scope) override;
  Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields,
                                        const Scope& scope,
                                        const UpdateCheck& check = nullptr) override;
  Result<void> DeleteDestination(int64_t id, const Scope& scope) override;
  Result<Timestamp> RotateSecret(int64_t id, const std::string& secret, Duration grace,
                                 const Scope& scope) override;
  Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                    const std::optional<IdempotencyKey>& key) override;
  bool InsertEventLater(NewEvent& event, InsertDone& done) override;
  Result<Event> GetEvent(int64_t id, const Scope& scope) override;
  Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page,
                                    const Scope& scope) override;
  Result<Delivery> GetDelivery(int64_t id, const Scope& scope) override;
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter, const Page& page,
                                           const Scope& scope) override;
  Result<Listing<Attempt>> ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                        const Scope& scope) override;
  Result<ClaimedBatch> ClaimDue(int limit, Duration lease, int default_cap) override;
  Result<RecordedOutcomes> RecordOutcomes(std::span<const AttemptRecord> records,
                                          const ProtectionSettings& protection) override;
  Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) override;
  Result<int> RequeueExpiredLeases() override;
  Result<std::optional<Timestamp>> NextDueAt() override;
  Result<std::unique_ptr<WakeupListener>> Listen() override;
  Result<DeliveryGauges> CountDeliveries() override;
  Result<std::vector<std::pair<int64_t, std::string>>> ClientCertificates() override;
  Result<HealthStats> Stats(Duration window) override;
  Result<int64_t> PurgeExpired(Duration retention, int batch) override;
  Result<std::vector<StatsPoint>> StatsSeries(Duration window, Duration step) override;
  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter, const Page& page,
                                              const Scope& scope) override;
  Result<int64_t> ReplayDeadLetter(int64_t id, const Scope& scope) override;
  Result<DeadLetter> DismissDeadLetter(int64_t id, const Scope& scope) override;
  Result<BulkReplay> ReplayDeadLetters(const DeadLetterFilter& filter, const Scope& scope,
                                       std::optional<int64_t> max) override;
  Result<TenantListing> ListTenants(const TenantPage& page) override;
  Result<CredentialCensus> CountCredentials() override;
  Result<int64_t> ReencryptCredentials() override;
  // pg_catalog_store.cc
  Result<EventType> CreateEventType(const EventType& type) override;
  Result<EventType> GetEventType(const std::string& name) override;
  Result<EventTypeListing> ListEventTypes(const EventTypePage& page) override;
  Result<EventType> UpdateEventType(const std::string& name,
                                    const EventTypeFields& fields) override;
  Result<void> DeleteEventType(const std::string& name) override;
  Result<CatalogSnapshotRows> LoadCatalog() override;
  Result<int64_t> CatalogGeneration() override;
  Result<void> SetEventTypesMode(EventTypesMode mode) override;
  Result<bool> TestFilter(const std::string& filter, const std::string& payload) override;

 private:
  // The two halves of RecordOutcomes: successes of clean destinations, and the rest.
  Result<RecordedOutcomes> RecordSuccesses(std::span<const AttemptRecord> records);
  Result<RecordedOutcomes> RecordWithProtection(std::span<const AttemptRecord> records,
                                                const ProtectionSettings& protection);
  template <typename F>
  auto Run(F&& body) -> decltype(body(std::declval<pqxx::connection&>()));
  // One page of a newest-first list: `query` fetches page.limit + 1 rows, each mapped by
  // `to_item`; the extra row only says that there is a next page, whose cursor is the
  // last item's id.
  template <typename T>
  Result<Listing<T>> ListPage(const Query& query, const Params& params, const Page& page,
                              T (*to_item)(const pqxx::row&));
  template <typename F>
  auto RunOn(PgPool& pool, F&& body) -> decltype(body(std::declval<pqxx::connection&>()));

  // A destination as stored, with its credentials sealed for the database or opened
  // for the caller.
  Destination Sealed(Destination d) const;
  Result<Destination> Opened(Destination d) const;
  void Open(ClaimedDelivery& d) const;

  SecretBox box_;
  PgPool pool_;
  PgPool worker_pool_;
  std::unique_ptr<GroupCommitter> committer_;  // null: no group commit
};

// Defined here so that every file of PgStore (pg_store.cc, pg_catalog_store.cc) can use them.
template <typename F>
auto PgStore::Run(F&& body) -> decltype(body(std::declval<pqxx::connection&>())) {
  return RunOn(pool_, std::forward<F>(body));
}

template <typename F>
auto PgStore::RunOn(PgPool& pool, F&& body) -> decltype(body(std::declval<pqxx::connection&>())) {
  auto lease = pool.Acquire();
  if (!lease) {
    return Fail(ErrorKind::kUnavailable, "every database connection is busy; retry shortly");
  }
  try {
    return body(lease->conn());
  } catch (...) {
    bool discard = false;
    Error error = CurrentError(&discard);
    if (discard) lease->Discard();
    return std::unexpected(std::move(error));
  }
}

}  // namespace webhookd::pg
