#pragma once

#include "base/secret_box.h"
#include "store/delivery_queue.h"
#include "store/feed_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// The worker's side: claims, outcomes, leases, wake-ups. `pool` is the worker pool, whose
// plans suit the claim and outcome statements; `box` opens the claimed credentials. Thread-safe:
// each call borrows a connection of the pool.
class PgDeliveryQueue final : public DeliveryQueue {
 public:
  PgDeliveryQueue(PgPool& pool, const SecretBox& box) : pool_(pool), box_(box) {}

  Result<ClaimedBatch> ClaimDue(int limit, Duration lease, int default_cap) override;
  Result<RecordedOutcomes> RecordOutcomes(std::span<const AttemptRecord> records,
                                          const ProtectionSettings& protection) override;
  Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) override;
  Result<int> RequeueExpiredLeases() override;
  Result<std::vector<FeedMessage>> ExpiredFeedLeases(int limit) override;
  Result<std::optional<Timestamp>> NextDueAt() override;
  Result<std::unique_ptr<WakeupListener>> Listen() override;

  // A feed's reads and what its acks and nacks find (FeedStore); they record through
  // RecordOutcomes.
  Result<FeedLease> LeaseFeed(int64_t destination_id, int limit, Duration lease);
  Result<std::vector<int64_t>> ReadyFeeds(std::span<const int64_t> feeds);
  Result<FeedMessageCounts> CountFeed(int64_t destination_id, bool is_feed);
  Result<std::vector<FeedMessage>> FindFeedMessages(int64_t destination_id,
                                                    std::span<const int64_t> event_ids);

 private:
  // The two halves of RecordOutcomes: successes of clean destinations, and the rest.
  Result<RecordedOutcomes> RecordSuccesses(std::span<const AttemptRecord> records);
  Result<RecordedOutcomes> RecordWithProtection(std::span<const AttemptRecord> records,
                                                const ProtectionSettings& protection);
  void Open(ClaimedDelivery& d) const;
  PgPool& pool_;
  const SecretBox& box_;
};

}  // namespace webhookd::pg
