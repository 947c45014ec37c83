#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"

namespace webhookd {

// One partition of the history (docs/retention.md), for `webhookd retention status`.
struct HistoryPartition {
  std::string table;                 // events, deliveries, attempts, dead_letters, event_subjects
  std::optional<std::string> day;    // YYYY-MM-DD (UTC); none: the kept partition
  int64_t rows = 0;                  // PostgreSQL's estimate of its live rows
  int64_t bytes = 0;                 // with its indexes
  std::optional<Timestamp> goes_at;  // when retention drops it; none: kept forever, or kept
  bool dropping = false;             // being dropped now
};

// What one round of dropping days did.
struct DroppedDays {
  int days = 0;
  int64_t kept_events = 0;  // unfinished when their day went: carried to the kept partitions
};

// Deleting what retention no longer keeps. Thread-safe; nothing here throws.
class RetentionStore {
 public:
  virtual ~RetentionStore() = default;
  // Creates the history's partitions through `days_ahead` days from today (UTC), so that
  // ingest never waits for one. Returns how many days it added.
  virtual Result<int> AddHistoryDays(int days_ahead) = 0;
  // Drops up to `max_days` days of the history that ended before `cutoff` (now less the
  // retention), oldest first: what of each is unfinished moves to the kept partitions,
  // then its partitions are detached (without blocking ingest, claims or lists) and
  // dropped. A day whose drop was interrupted is finished first, whatever `cutoff`. When
  // another process is dropping, does nothing.
  virtual Result<DroppedDays> DropAgedDays(Timestamp cutoff, int max_days) = 0;
  // Deletes up to `batch` kept events (carried past their day) older than `retention`
  // whose deliveries are all terminal now, with their deliveries, attempts and dead
  // letters, in one transaction; and idempotency keys older than 24 hours, and earlier
  // secrets past their grace period. `retention` zero keeps every event. Nothing pending
  // or in flight is touched. When another process is purging, does nothing. Returns how
  // many events went.
  virtual Result<int64_t> PurgeExpired(Duration retention, int batch) = 0;
  // Every partition of the history, each day's in day order, then the kept ones.
  virtual Result<std::vector<HistoryPartition>> ListHistoryPartitions(Duration retention) = 0;
};

}  // namespace webhookd
