#pragma once

// A delivery that gave up, kept for replay.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "core/outcome.h"

namespace webhookd {

struct DeadLetter {
  int64_t id = 0;
  int64_t delivery_id = 0;
  int64_t event_id = 0;
  int64_t destination_id = 0;
  DeadLetterReason reason = DeadLetterReason::kExhausted;
  int attempt_count = 0;
  std::optional<int> last_status_code;
  std::optional<std::string> last_error;
  Timestamp dead_lettered_at;
  std::optional<Timestamp> replayed_at;
  std::optional<std::string> tenant_id = std::nullopt;  // its delivery's
  // Set aside without a replay: it no longer holds its fifo key (docs/ordering.md).
  std::optional<Timestamp> dismissed_at = std::nullopt;
};

struct DeadLetterFilter {
  std::optional<int64_t> destination_id;
  std::optional<DeadLetterReason> reason;
  std::optional<Timestamp> since;  // dead_lettered_at >= since
  std::optional<Timestamp> until;  // dead_lettered_at < until
  std::optional<std::string> tenant_id = std::nullopt;
};

}  // namespace webhookd
