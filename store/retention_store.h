#pragma once

#include <cstdint>

#include "base/clock.h"
#include "base/result.h"

namespace webhookd {

// Deleting what retention no longer keeps. Thread-safe; nothing here throws.
class RetentionStore {
 public:
  virtual ~RetentionStore() = default;
  // Deletes up to `batch` events older than `retention` whose deliveries are all
  // terminal, with their deliveries, attempts and dead letters, in one transaction; and
  // idempotency keys older than 24 hours, and earlier secrets past their grace period.
  // `retention` zero keeps every event. Nothing pending or in flight is touched. When
  // another process is purging, does nothing. Returns how many events went.
  virtual Result<int64_t> PurgeExpired(Duration retention, int batch) = 0;
};

}  // namespace webhookd
