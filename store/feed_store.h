#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "core/stats.h"
#include "store/delivery_queue_types.h"

namespace webhookd {

// A feed's read: its messages, each leased under the read's token until `lease_until`.
struct FeedLease {
  std::vector<ClaimedDelivery> messages;  // oldest first; ordering_key set when the event has one
  Timestamp lease_until;
};

// A message of a feed as an ack or a nack finds it.
struct FeedMessage {
  int64_t delivery_id = 0;
  int64_t event_id = 0;
  int64_t destination_id = 0;
  int64_t lease_token = 0;  // 0: not leased
  bool leased = false;      // its lease still runs
  int attempt_count = 0;    // attempts made before this one, all cycles
  int cycle_attempts = 0;   // attempts made before this one, this cycle
  Timestamp created_at;
};

// Feeds (docs/feeds.md): destinations whose url is `feed:`, read by their consumer. The
// caller has checked that the destination is a feed the caller may read. Thread-safe.
class FeedStore {
 public:
  virtual ~FeedStore() = default;
  // Leases up to `limit` of the feed's waiting messages for `lease` (a fifo feed's key
  // heads alone); none leased by another read whose lease still runs.
  virtual Result<FeedLease> LeaseFeed(int64_t destination_id, int limit, Duration lease) = 0;
  // The feed's queued messages, waiting and leased (`is_feed` false: a destination pushed
  // to that falls back to its feed, whose fallen-back messages count).
  virtual Result<FeedMessageCounts> CountFeed(int64_t destination_id, bool is_feed) = 0;
  // Which of `feeds` have a message a read could lease now (a fifo feed whose heads are
  // leased may be named too): what wakes the waiting reads (server/feed_waiters.h).
  virtual Result<std::vector<int64_t>> ReadyFeeds(std::span<const int64_t> feeds) = 0;
  // The queued messages of the feed made by `event_ids` (the ids a consumer sees); a
  // finished one is absent.
  virtual Result<std::vector<FeedMessage>> FindFeedMessages(int64_t destination_id,
                                                            std::span<const int64_t> event_ids) = 0;
  // Records an ack or a nack as an attempt, fenced by the lease token as a worker's
  // outcome is fenced by its claim's.
  virtual Result<RecordedOutcomes> RecordFeedOutcomes(std::span<const AttemptRecord> records) = 0;
};

}  // namespace webhookd
