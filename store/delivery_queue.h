#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/delivery_queue_types.h"
#include "store/feed_store.h"

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

// What a delivery worker needs of the store. Thread-safe; nothing here throws.
class DeliveryQueue {
 public:
  virtual ~DeliveryQueue() = default;
  // Claims up to `limit` due deliveries of enabled destinations, honouring each
  // destination's protection across all workers: its effective in-flight cap
  // (`default_cap` where it has no max_in_flight), its rate limit and its circuit (an
  // open circuit's deliveries come as kSkip, a probe as kProbe). Commits; no other worker
  // gets them until `lease` has passed. Every later change to a claimed delivery must
  // present the claim's token.
  virtual Result<ClaimedBatch> ClaimDue(int limit, Duration lease, int default_cap) = 0;
  // Writes attempts and next states in one transaction, with the destinations' protection
  // state and the operational events it causes; a record whose claim token no longer
  // matches changes nothing.
  virtual Result<RecordedOutcomes> RecordOutcomes(std::span<const AttemptRecord> records,
                                                  const ProtectionSettings& protection) = 0;
  // Hands claimed-but-unsent deliveries back, due now, with no attempt used.
  virtual Result<int> ReleaseClaims(std::span<const ReleasedClaim> claims) = 0;
  // Makes deliveries whose lease ran out pending again. Returns how many.
  virtual Result<int> RequeueExpiredLeases() = 0;
  // Up to `limit` feed messages whose lease ended unsettled (docs/feeds.md); the worker
  // records each as a failed attempt. None where there are no feeds.
  virtual Result<std::vector<FeedMessage>> ExpiredFeedLeases(int /*limit*/) {
    return std::vector<FeedMessage>{};
  }
  // The earliest next_attempt_at of a pending delivery, if any.
  virtual Result<std::optional<Timestamp>> NextDueAt() = 0;
  // A listener for the wake-up notification.
  virtual Result<std::unique_ptr<WakeupListener>> Listen() = 0;
};
}  // namespace webhookd
