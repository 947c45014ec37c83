#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/model.h"

namespace webhookd {

// Wakes a worker when deliveries become due (ingest, replay, enable). Not thread-safe:
// one owner.
class WakeupListener {
 public:
  virtual ~WakeupListener() = default;
  // True when a wake-up arrived within `timeout`, false on timeout; kUnavailable when
  // the connection is lost (the caller backs off and makes a new listener).
  virtual Result<bool> Wait(Duration timeout) = 0;
};

// The durable state of webhookd. Thread-safe. Every failure of the database itself is
// kUnavailable; nothing here throws.
class Store {
 public:
  virtual ~Store() = default;

  // True when the database answers and every known migration is applied.
  virtual Result<bool> Ready() = 0;

  // API keys: only hashes are stored.
  virtual Result<ApiKeyInfo> CreateApiKey(const std::string& name, Role role,
                                          const std::string& key_hash) = 0;
  // Creates or un-revokes an admin key with this hash.
  virtual Result<void> EnsureAdminKey(const std::string& key_hash) = 0;
  virtual Result<std::vector<ApiKeyInfo>> ListApiKeys() = 0;
  virtual Result<void> RevokeApiKey(int64_t id) = 0;  // kNotFound if absent or revoked
  // The live (unrevoked) key with this hash.
  virtual Result<std::optional<ApiKeyInfo>> FindApiKey(const std::string& key_hash) = 0;

  // Destinations; deleted ones are kNotFound everywhere.
  virtual Result<Destination> CreateDestination(const Destination& d) = 0;
  virtual Result<Destination> GetDestination(int64_t id) = 0;
  virtual Result<Listing<Destination>> ListDestinations(const Page& page) = 0;
  // Applies the given fields; the caller has validated them.
  virtual Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields) = 0;
  // Soft-deletes and cancels its unfinished deliveries, in one transaction.
  virtual Result<void> DeleteDestination(int64_t id) = 0;

  // Writes the event, its fan-out and the idempotency record in one transaction and
  // wakes the workers once after commit. An unknown or deleted `destination_id` is
  // kInvalid; an idempotency key seen within 24 h with another body is kInvalid, with the
  // same body the original receipt comes back with `replayed`.
  virtual Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                            const std::optional<IdempotencyKey>& key) = 0;
  virtual Result<Event> GetEvent(int64_t id) = 0;  // with its deliveries
  virtual Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page) = 0;

  virtual Result<Delivery> GetDelivery(int64_t id) = 0;
  virtual Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter,
                                                   const Page& page) = 0;
  virtual Result<std::vector<Attempt>> ListAttempts(int64_t delivery_id) = 0;  // oldest first

  // Claims up to `limit` due deliveries of enabled destinations, honouring each
  // destination's in-flight cap across all workers (`default_cap` where it has none),
  // and commits; no other worker gets them until `lease` has passed. Every later change
  // to a claimed delivery must present the claim's token.
  virtual Result<std::vector<ClaimedDelivery>> ClaimDue(int limit, Duration lease,
                                                        int default_cap) = 0;
  // Writes attempts and next states in one transaction; a record whose claim token no
  // longer matches changes nothing. Returns the delivery ids of the records applied.
  virtual Result<std::vector<int64_t>> RecordOutcomes(std::span<const AttemptRecord> records) = 0;
  // Hands claimed-but-unsent deliveries back, due now, with no attempt used.
  virtual Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) = 0;
  // Makes deliveries whose lease ran out pending again. Returns how many.
  virtual Result<int> RequeueExpiredLeases() = 0;
  // The earliest next_attempt_at of a pending delivery, if any.
  virtual Result<std::optional<Timestamp>> NextDueAt() = 0;
  // A listener for the wake-up notification.
  virtual Result<std::unique_ptr<WakeupListener>> Listen() = 0;

  // Counts for the /metrics gauges.
  virtual Result<DeliveryGauges> CountDeliveries() = 0;

  // The health figures over the last `window`.
  virtual Result<HealthStats> Stats(Duration window) = 0;

  // Dead letters (admin).
  virtual Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter,
                                                      const Page& page) = 0;
  // kNotFound, or kConflict when already replayed or the destination is deleted.
  virtual Result<int64_t> ReplayDeadLetter(int64_t id) = 0;  // returns the delivery id
  virtual Result<int64_t> ReplayDeadLetters(const DeadLetterFilter& filter) = 0;
};

}  // namespace webhookd
