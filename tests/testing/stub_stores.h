#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "server/api.h"
#include "store/key_store.h"

namespace webhookd::testing {

// Counts calls and fails each unscripted one with kInternal, so a test can assert that bad
// input never reached the store. Atomic: some tests call the API from several threads.
class CallCounter {
 public:
  std::atomic<int> calls = 0;

 protected:
  std::unexpected<Error> No() {
    ++calls;
    return Fail(ErrorKind::kInternal, "not scripted");
  }
};

// The KeyStore the Authenticator reads, with a scriptable lookup.
class StubKeyStore final : public KeyStore, public CallCounter {
 public:
  std::function<Result<std::optional<ApiKeyInfo>>(const std::string&)> on_find_api_key;

  Result<ApiKeyInfo> CreateApiKey(const NewApiKey&) override { return No(); }
  Result<Bootstrap> EnsureAdminKey(const std::string&) override { return No(); }
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override { return No(); }
  Result<void> RevokeApiKey(int64_t) override { return No(); }
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& hash) override {
    ++calls;
    if (on_find_api_key) return on_find_api_key(hash);
    return No();
  }
};

// Every store the REST API uses, with creating a destination and ingesting scriptable.
class StubApiStores final : public DestinationStore,
                            public EventStore,
                            public DeliveryReads,
                            public DeadLetterStore,
                            public OperationsStore,
                            public TenantStore,
                            public CatalogStore,
                            public ErasureStore,
                            public FeedStore,
                            public CallCounter {
 public:
  std::function<Result<Destination>(const Destination&)> on_create_destination;
  std::function<Result<Destination>(int64_t, const DestinationFields&)> on_update_destination;
  std::function<Result<IngestReceipt>(const NewEvent&, const std::optional<IdempotencyKey>&)>
      on_insert_event;

  // ErasureStore
  Result<Erasure> RequestErasure(const std::string&, const std::optional<std::string>&,
                                 const Scope&) override {
    ++calls;
    return No();
  }
  Result<Erasure> GetErasure(int64_t, const Scope&) override { return No(); }
  Result<ErasureRound> RunErasures(int, int) override { return No(); }

  // FeedStore
  Result<FeedLease> LeaseFeed(int64_t, int, Duration) override { return No(); }
  Result<std::vector<int64_t>> ReadyFeeds(std::span<const int64_t>) override { return No(); }
  Result<FeedMessageCounts> CountFeed(int64_t, bool) override { return No(); }
  Result<std::vector<FeedMessage>> FindFeedMessages(int64_t, std::span<const int64_t>) override {
    return No();
  }
  Result<RecordedOutcomes> RecordFeedOutcomes(std::span<const AttemptRecord>) override {
    return No();
  }

  ApiStores stores() {
    return ApiStores{*this, *this, *this, *this, *this, keys, *this, *this, *this, *this};
  }
  StubKeyStore keys;

  Result<Destination> CreateDestination(const Destination& d, int) override {
    ++calls;
    if (on_create_destination) return on_create_destination(d);
    return No();
  }
  Result<Destination> GetDestination(int64_t, const Scope&) override { return No(); }
  Result<std::vector<DestinationStatsBucket>> GetDestinationStats(int64_t,
                                                                  const DestinationStatsWindow&,
                                                                  const Scope&) override {
    return No();
  }
  Result<Listing<Destination>> ListDestinations(const DestinationFilter&, const Page&,
                                                const Scope&) override {
    return No();
  }
  Result<Destination> UpdateDestination(int64_t id, const DestinationFields& f, const Scope&,
                                        const UpdateCheck& = nullptr) override {
    ++calls;
    if (on_update_destination) return on_update_destination(id, f);
    return No();
  }
  Result<void> DeleteDestination(int64_t, const Scope&) override { return No(); }
  Result<Timestamp> RotateSecret(int64_t, const std::string&, Duration, const Scope&) override {
    return No();
  }
  Result<IngestReceipt> InsertEvent(const NewEvent& e,
                                    const std::optional<IdempotencyKey>& k) override {
    ++calls;
    if (on_insert_event) return on_insert_event(e, k);
    return No();
  }
  Result<Event> GetEvent(int64_t, const Scope&) override { return No(); }
  Result<Listing<Event>> ListEvents(const EventFilter&, const Page&, const Scope&) override {
    return No();
  }
  Result<Delivery> GetDelivery(int64_t, const Scope&) override { return No(); }
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter&, const Page&,
                                           const Scope&) override {
    return No();
  }
  Result<Listing<Attempt>> ListAttempts(int64_t, const AttemptPage&, const Scope&) override {
    return No();
  }
  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter&, const Page&,
                                              const Scope&) override {
    return No();
  }
  Result<int64_t> ReplayDeadLetter(int64_t, const Scope&) override { return No(); }
  Result<DeadLetter> DismissDeadLetter(int64_t, const Scope&) override { return No(); }
  Result<BulkReplay> ReplayDeadLetters(const DeadLetterFilter&, const Scope&,
                                       std::optional<int64_t>) override {
    return No();
  }
  Result<TenantListing> ListTenants(const TenantPage&) override { return No(); }
  Result<bool> Ready() override {
    ++calls;
    return true;
  }
  Result<DeliveryGauges> CountDeliveries() override { return No(); }
  Result<std::vector<std::pair<int64_t, std::string>>> ClientCertificates() override {
    return No();
  }
  Result<std::vector<FeedMessageCounts>> CountFeedMessages() override { return No(); }
  Result<HealthStats> Stats(Duration) override { return No(); }
  Result<std::vector<StatsPoint>> StatsSeries(Duration, Duration) override { return No(); }
  Result<std::vector<FailingDestination>> FailingDestinations(Duration, int) override {
    return No();
  }

  // The catalog: empty at generation 1 unless scripted; reading it is not a counted call.
  std::function<Result<CatalogSnapshotRows>()> on_load_catalog;
  Result<EventType> CreateEventType(const EventType&) override { return No(); }
  Result<EventType> GetEventType(const std::string&) override { return No(); }
  Result<EventTypeListing> ListEventTypes(const EventTypePage&) override { return No(); }
  Result<EventType> UpdateEventType(const std::string&, const EventTypeFields&) override {
    return No();
  }
  Result<void> DeleteEventType(const std::string&) override { return No(); }
  Result<CatalogSnapshotRows> LoadCatalog() override {
    if (on_load_catalog) return on_load_catalog();
    return CatalogSnapshotRows{1, {}};
  }
  Result<int64_t> CatalogGeneration() override { return 1; }
  Result<void> SetEventTypesMode(EventTypesMode) override { return No(); }
  Result<bool> TestFilter(const std::string&, const std::string&) override { return No(); }
};

}  // namespace webhookd::testing
