#pragma once

// The figures of /metrics and /v1/admin/stats.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"

namespace webhookd {

struct DeliveryGauges {
  int64_t pending = 0;
  int64_t in_flight = 0;
  int64_t retrying_over_24h = 0;  // unfinished and created more than 24 h ago
  int64_t circuits_open = 0;      // enabled destinations whose circuit is open or half-open
};

// A feed's queued messages (docs/feeds.md): waiting for a read, and leased to one.
struct FeedMessageCounts {
  int64_t destination_id = 0;
  int64_t waiting = 0;
  int64_t leased = 0;
};

// The health figures of docs/api.md over a window; rates are fractions in [0, 1], and 0
// when there was nothing to measure.
struct HealthStats {
  int64_t attempts = 0;
  double retry_rate = 0;                   // attempts that ended retryable / attempts
  double dead_letter_rate = 0;             // dead letters / (successes + dead letters)
  double avg_attempts_to_success = 0;      // mean attempt number of the successful attempts
  double second_attempt_success_rate = 0;  // second attempts that succeeded / second attempts
  int64_t retrying_over_24h = 0;
  int64_t pending = 0;
  int64_t in_flight = 0;
};

// One step of the console's chart: what happened from `at` for one step.
struct StatsPoint {
  Timestamp at;
  int64_t attempts = 0;
  int64_t successes = 0;
  int64_t failures = 0;  // retryable and permanent outcomes
  int64_t dead_letters = 0;
};

// A destination among those that failed most over a window (the console's Overview).
struct FailingDestination {
  int64_t id = 0;
  std::optional<std::string> tenant_id;  // none for a destination of no tenant
  std::string url;
  std::string description;
  int64_t failed = 0;  // retryable and permanent outcomes
  int64_t succeeded = 0;
  int64_t dead_lettered = 0;
};

}  // namespace webhookd
