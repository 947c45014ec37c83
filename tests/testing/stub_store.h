#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "store/store.h"

namespace webhookd::testing {

// A Store whose every method fails with kInternal unless a test scripts it; it counts
// the calls it gets, so a test can assert that bad input never reached the store.
class StubStore : public Store {
 public:
  int calls = 0;
  std::function<Result<Destination>(const Destination&)> on_create_destination;
  std::function<Result<IngestReceipt>(const NewEvent&, const std::optional<IdempotencyKey>&)>
      on_insert_event;
  std::function<Result<std::optional<ApiKeyInfo>>(const std::string&)> on_find_api_key;

  Result<bool> Ready() override { return Count(true); }
  Result<ApiKeyInfo> CreateApiKey(const std::string&, Role, const std::string&) override {
    return No();
  }
  Result<void> EnsureAdminKey(const std::string&) override { return No(); }
  Result<std::vector<ApiKeyInfo>> ListApiKeys() override { return No(); }
  Result<void> RevokeApiKey(int64_t) override { return No(); }
  Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& hash) override {
    ++calls;
    if (on_find_api_key) return on_find_api_key(hash);
    return No();
  }
  Result<Destination> CreateDestination(const Destination& d) override {
    ++calls;
    if (on_create_destination) return on_create_destination(d);
    return No();
  }
  Result<Destination> GetDestination(int64_t) override { return No(); }
  Result<Listing<Destination>> ListDestinations(const Page&) override { return No(); }
  Result<Destination> UpdateDestination(int64_t, const DestinationFields&) override { return No(); }
  Result<void> DeleteDestination(int64_t) override { return No(); }
  Result<IngestReceipt> InsertEvent(const NewEvent& e,
                                    const std::optional<IdempotencyKey>& k) override {
    ++calls;
    if (on_insert_event) return on_insert_event(e, k);
    return No();
  }
  Result<Event> GetEvent(int64_t) override { return No(); }
  Result<Listing<Event>> ListEvents(const EventFilter&, const Page&) override { return No(); }
  Result<Delivery> GetDelivery(int64_t) override { return No(); }
  Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter&, const Page&) override {
    return No();
  }
  Result<std::vector<Attempt>> ListAttempts(int64_t) override { return No(); }
  Result<std::vector<ClaimedDelivery>> ClaimDue(int, Duration, int) override { return No(); }
  Result<std::vector<int64_t>> RecordOutcomes(std::span<const AttemptRecord>) override {
    return No();
  }
  Result<int> ReleaseClaims(std::span<const ReleasedClaim>) override { return No(); }
  Result<int> RequeueExpiredLeases() override { return No(); }
  Result<std::optional<Timestamp>> NextDueAt() override { return No(); }
  Result<std::unique_ptr<WakeupListener>> Listen() override { return No(); }
  Result<DeliveryGauges> CountDeliveries() override { return No(); }
  Result<HealthStats> Stats(Duration) override { return No(); }
  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter&, const Page&) override {
    return No();
  }
  Result<int64_t> ReplayDeadLetter(int64_t) override { return No(); }
  Result<int64_t> ReplayDeadLetters(const DeadLetterFilter&) override { return No(); }

 private:
  template <typename T>
  T Count(T value) {
    ++calls;
    return value;
  }
  std::unexpected<Error> No() {
    ++calls;
    return Fail(ErrorKind::kInternal, "not scripted");
  }
};

}  // namespace webhookd::testing
