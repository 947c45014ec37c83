#pragma once

#include <memory>
#include <string>

#include "base/secret_box.h"
#include "store/pg/committer.h"
#include "store/pg/pg_catalog_store.h"
#include "store/pg/pg_dead_letter_store.h"
#include "store/pg/pg_delivery_queue.h"
#include "store/pg/pg_delivery_reads.h"
#include "store/pg/pg_destination_store.h"
#include "store/pg/pg_erasure_store.h"
#include "store/pg/pg_event_store.h"
#include "store/pg/pg_key_store.h"
#include "store/pg/pg_operations_store.h"
#include "store/pg/pg_pool.h"
#include "store/pg/pg_recovery_store.h"
#include "store/pg/pg_retention_store.h"
#include "store/pg/pg_secret_store.h"
#include "store/pg/pg_source_store.h"
#include "store/pg/pg_tenant_store.h"
#include "store/store.h"

namespace webhookd::pg {

// The Store on PostgreSQL: owns the connection pools, the group committer and the
// credentials' SecretBox, and one adapter per store interface over them (pg_*_store.cc,
// pg_delivery_*.cc), to which every call goes. Thread-safe: each call borrows a pooled
// connection.
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

  // KeyStore
  Result<ApiKeyInfo> CreateApiKey(const NewApiKey& key) override { return keys_.CreateApiKey(key); }
  Result<Bootstrap> EnsureAdminKey(const std::string& key_hash) override {
    return keys_.EnsureAdminKey(key_hash);
  }
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override { return keys_.ListApiKeys(); }
  Result<void> RevokeApiKey(int64_t id) override { return keys_.RevokeApiKey(id); }
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) override {
    return keys_.FindApiKey(key_hash);
  }
  // DestinationStore
  Result<Destination> CreateDestination(const Destination& d, int max_per_tenant) override {
    return destinations_.CreateDestination(d, max_per_tenant);
  }
  Result<Destination> GetDestination(int64_t id, const Scope& scope) override {
    return destinations_.GetDestination(id, scope);
  }
  Result<std::vector<DestinationStatsBucket>> GetDestinationStats(
      int64_t id, const DestinationStatsWindow& window, const Scope& scope) override {
    return destinations_.GetDestinationStats(id, window, scope);
  }
  Result<Listing<Destination>> ListDestinations(const DestinationFilter& filter, const Page& page,
                                                const Scope& scope) override {
    return destinations_.ListDestinations(filter, page, scope);
  }
  Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields,
                                        const Scope& scope,
                                        const UpdateCheck& check = nullptr) override {
    return destinations_.UpdateDestination(id, fields, scope, check);
  }
  Result<void> DeleteDestination(int64_t id, const Scope& scope) override {
    return destinations_.DeleteDestination(id, scope);
  }
  Result<Timestamp> RotateSecret(int64_t id, const std::string& secret, Duration grace,
                                 const Scope& scope) override {
    return destinations_.RotateSecret(id, secret, grace, scope);
  }
  // EventStore
  Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                    const std::optional<IdempotencyKey>& key) override {
    return events_.InsertEvent(event, key);
  }
  bool InsertEventLater(NewEvent& event, InsertDone& done) override {
    return events_.InsertEventLater(event, done);
  }
  Result<Event> GetEvent(int64_t id, const Scope& scope) override {
    return events_.GetEvent(id, scope);
  }
  Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page,
                                    const Scope& scope) override {
    return events_.ListEvents(filter, page, scope);
  }
  // DeliveryReads
  Result<Delivery> GetDelivery(int64_t id, const Scope& scope) override {
    return delivery_reads_.GetDelivery(id, scope);
  }
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter, const Page& page,
                                           const Scope& scope) override {
    return delivery_reads_.ListDeliveries(filter, page, scope);
  }
  Result<Listing<Attempt>> ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                        const Scope& scope) override {
    return delivery_reads_.ListAttempts(delivery_id, page, scope);
  }
  // DeadLetterStore
  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter, const Page& page,
                                              const Scope& scope) override {
    return dead_letters_.ListDeadLetters(filter, page, scope);
  }
  Result<int64_t> ReplayDeadLetter(int64_t id, const Scope& scope) override {
    return dead_letters_.ReplayDeadLetter(id, scope);
  }
  Result<DeadLetter> DismissDeadLetter(int64_t id, const Scope& scope) override {
    return dead_letters_.DismissDeadLetter(id, scope);
  }
  Result<BulkReplay> ReplayDeadLetters(const DeadLetterFilter& filter, const Scope& scope,
                                       std::optional<int64_t> max) override {
    return dead_letters_.ReplayDeadLetters(filter, scope, max);
  }
  // DeliveryQueue
  Result<ClaimedBatch> ClaimDue(int limit, Duration lease, int default_cap) override {
    return delivery_queue_.ClaimDue(limit, lease, default_cap);
  }
  Result<RecordedOutcomes> RecordOutcomes(std::span<const AttemptRecord> records,
                                          const ProtectionSettings& protection) override {
    return delivery_queue_.RecordOutcomes(records, protection);
  }
  Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) override {
    return delivery_queue_.ReleaseClaims(claims);
  }
  Result<int> RequeueExpiredLeases() override { return delivery_queue_.RequeueExpiredLeases(); }
  Result<std::vector<FeedMessage>> ExpiredFeedLeases(int limit) override {
    return delivery_queue_.ExpiredFeedLeases(limit);
  }
  Result<std::optional<Timestamp>> NextDueAt() override { return delivery_queue_.NextDueAt(); }
  Result<std::unique_ptr<WakeupListener>> Listen() override { return delivery_queue_.Listen(); }
  // FeedStore: on the API's connections.
  Result<FeedLease> LeaseFeed(int64_t destination_id, int limit, Duration lease) override {
    return feeds_.LeaseFeed(destination_id, limit, lease);
  }
  Result<FeedMessageCounts> CountFeed(int64_t destination_id, bool is_feed) override {
    return feeds_.CountFeed(destination_id, is_feed);
  }
  Result<std::vector<int64_t>> ReadyFeeds(std::span<const int64_t> feeds) override {
    return feeds_.ReadyFeeds(feeds);
  }
  Result<std::vector<FeedMessage>> FindFeedMessages(int64_t destination_id,
                                                    std::span<const int64_t> event_ids) override {
    return feeds_.FindFeedMessages(destination_id, event_ids);
  }
  Result<RecordedOutcomes> RecordFeedOutcomes(std::span<const AttemptRecord> records) override {
    // A feed's protection state never changes (record_outcomes.sql): no settings apply.
    return feeds_.RecordOutcomes(records, ProtectionSettings{});
  }
  // OperationsStore
  Result<bool> Ready() override { return operations_.Ready(); }
  Result<DeliveryGauges> CountDeliveries() override { return operations_.CountDeliveries(); }
  Result<std::vector<FeedMessageCounts>> CountFeedMessages() override {
    return operations_.CountFeedMessages();
  }
  Result<std::vector<std::pair<int64_t, std::string>>> ClientCertificates() override {
    return operations_.ClientCertificates();
  }
  Result<HealthStats> Stats(Duration window) override { return operations_.Stats(window); }
  Result<std::vector<StatsPoint>> StatsSeries(Duration window, Duration step) override {
    return operations_.StatsSeries(window, step);
  }
  Result<std::vector<FailingDestination>> FailingDestinations(Duration window, int limit) override {
    return operations_.FailingDestinations(window, limit);
  }
  // RetentionStore
  Result<int> AddHistoryDays(int days_ahead) override {
    return retention_.AddHistoryDays(days_ahead);
  }
  Result<DroppedDays> DropAgedDays(Timestamp cutoff, int max_days) override {
    return retention_.DropAgedDays(cutoff, max_days);
  }
  Result<int64_t> PurgeExpired(Duration retention, int batch) override {
    return retention_.PurgeExpired(retention, batch);
  }
  Result<std::vector<HistoryPartition>> ListHistoryPartitions(Duration retention) override {
    return retention_.ListHistoryPartitions(retention);
  }
  // ErasureStore
  Result<Erasure> RequestErasure(const std::string& subject,
                                 const std::optional<std::string>& tenant_id,
                                 const Scope& scope) override {
    return erasures_.RequestErasure(subject, tenant_id, scope);
  }
  Result<Erasure> GetErasure(int64_t id, const Scope& scope) override {
    return erasures_.GetErasure(id, scope);
  }
  Result<ErasureRound> RunErasures(int batch, int max_batches) override {
    return erasures_.RunErasures(batch, max_batches);
  }
  // RecoveryStore
  Result<Recovery> RequestRecovery(int64_t destination_id, Timestamp since,
                                   std::optional<Timestamp> until, const Scope& scope) override {
    return recoveries_.RequestRecovery(destination_id, since, until, scope);
  }
  Result<Recovery> GetRecovery(int64_t id, const Scope& scope) override {
    return recoveries_.GetRecovery(id, scope);
  }
  Result<RecoveryRound> RunRecoveries(const RecoveryPace& pace, int max_pages) override {
    return recoveries_.RunRecoveries(pace, max_pages);
  }
  // SecretStore
  Result<CredentialCensus> CountCredentials() override { return secrets_.CountCredentials(); }
  Result<int64_t> ReencryptCredentials() override { return secrets_.ReencryptCredentials(); }
  // TenantStore
  Result<TenantListing> ListTenants(const TenantPage& page) override {
    return tenants_.ListTenants(page);
  }
  // SourceStore
  Result<Source> CreateSource(const Source& source) override {
    return sources_.CreateSource(source);
  }
  Result<Source> GetSource(int64_t id, const Scope& scope) override {
    return sources_.GetSource(id, scope);
  }
  Result<Listing<Source>> ListSources(const SourceFilter& filter, const Page& page,
                                      const Scope& scope) override {
    return sources_.ListSources(filter, page, scope);
  }
  Result<Source> UpdateSource(int64_t id, const SourcePatch& apply, const Scope& scope) override {
    return sources_.UpdateSource(id, apply, scope);
  }
  Result<Timestamp> RotateSourceSecret(int64_t id, const std::string& secret, Duration grace,
                                       const Scope& scope) override {
    return sources_.RotateSourceSecret(id, secret, grace, scope);
  }
  Result<void> DeleteSource(int64_t id, const Scope& scope) override {
    return sources_.DeleteSource(id, scope);
  }
  Result<SourceSnapshot> LoadSources() override { return sources_.LoadSources(); }
  Result<int64_t> SourceGeneration() override { return sources_.SourceGeneration(); }
  Result<InboundReceipt> InsertInboundEvent(const InboundEvent& event) override {
    return sources_.InsertInboundEvent(event);
  }
  // CatalogStore
  Result<EventType> CreateEventType(const EventType& type) override {
    return catalog_.CreateEventType(type);
  }
  Result<EventType> GetEventType(const std::string& name) override {
    return catalog_.GetEventType(name);
  }
  Result<EventTypeListing> ListEventTypes(const EventTypePage& page) override {
    return catalog_.ListEventTypes(page);
  }
  Result<EventType> UpdateEventType(const std::string& name,
                                    const EventTypeFields& fields) override {
    return catalog_.UpdateEventType(name, fields);
  }
  Result<void> DeleteEventType(const std::string& name) override {
    return catalog_.DeleteEventType(name);
  }
  Result<CatalogSnapshotRows> LoadCatalog() override { return catalog_.LoadCatalog(); }
  Result<int64_t> CatalogGeneration() override { return catalog_.CatalogGeneration(); }
  Result<void> SetEventTypesMode(EventTypesMode mode) override {
    return catalog_.SetEventTypesMode(mode);
  }
  Result<bool> TestFilter(const std::string& filter, const std::string& payload) override {
    return catalog_.TestFilter(filter, payload);
  }

 private:
  // Declared before the adapters, which hold references to them.
  SecretBox box_;
  PgPool pool_;
  PgPool worker_pool_;
  std::unique_ptr<GroupCommitter> committer_;  // null: no group commit

  PgKeyStore keys_;
  PgDestinationStore destinations_;
  PgEventStore events_;
  PgDeliveryReads delivery_reads_;
  PgDeadLetterStore dead_letters_;
  PgDeliveryQueue delivery_queue_;
  PgDeliveryQueue feeds_;  // on pool_: a feed is read through the API
  PgOperationsStore operations_;
  PgRetentionStore retention_;
  PgErasureStore erasures_;
  PgRecoveryStore recoveries_;
  PgSecretStore secrets_;
  PgTenantStore tenants_;
  PgCatalogStore catalog_;
  PgSourceStore sources_;
};

}  // namespace webhookd::pg
