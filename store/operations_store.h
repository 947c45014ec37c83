#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/stats.h"

namespace webhookd {

// Readiness and the health figures. Thread-safe; nothing here throws; every failure of
// the database itself is kUnavailable.
class OperationsStore {
 public:
  virtual ~OperationsStore() = default;
  // True when the database answers and every known migration is applied.
  virtual Result<bool> Ready() = 0;
  // Counts for the /metrics gauges.
  virtual Result<DeliveryGauges> CountDeliveries() = 0;
  // Every live destination's mTLS client certificate (PEM), by id: for its expiry gauge.
  virtual Result<std::vector<std::pair<int64_t, std::string>>> ClientCertificates() = 0;
  // Every live feed's queued messages, by id: for the feed gauge.
  virtual Result<std::vector<FeedMessageCounts>> CountFeedMessages() = 0;
  // The health figures over the last `window`.
  virtual Result<HealthStats> Stats(Duration window) = 0;
  // The window ending now in points of `step`, oldest first; `window` is a whole number
  // of steps (the caller checks).
  virtual Result<std::vector<StatsPoint>> StatsSeries(Duration window, Duration step) = 0;
  // The live destinations with the most failed attempts over the last `window` (whole
  // minutes, from the rollups), at most `limit`, most failures first; none that only
  // succeeded.
  virtual Result<std::vector<FailingDestination>> FailingDestinations(Duration window,
                                                                      int limit) = 0;
};
}  // namespace webhookd
