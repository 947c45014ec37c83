#pragma once

// A delivery (one event to one destination) and its attempts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "core/outcome.h"

namespace webhookd {

enum class DeliveryStatus { kPending, kInFlight, kSucceeded, kDeadLettered, kCancelled };

std::string_view DeliveryStatusName(DeliveryStatus status);

std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view name);

struct Delivery {
  int64_t id = 0;
  int64_t event_id = 0;
  int64_t destination_id = 0;
  DeliveryStatus status = DeliveryStatus::kPending;
  int attempt_count = 0;
  std::optional<Timestamp> next_attempt_at;
  std::optional<Timestamp> last_attempt_at;
  std::optional<int> last_status_code;
  std::optional<std::string> last_error;
  Timestamp created_at;
  Timestamp updated_at;
  std::optional<std::string> tenant_id = std::nullopt;     // its event's (and destination's)
  std::optional<std::string> ordering_key = std::nullopt;  // its event's
  // On a fifo destination, the delivery this pending one waits for (docs/ordering.md).
  std::optional<int64_t> blocked_by = std::nullopt;
};

struct Attempt {
  int64_t delivery_id = 0;
  int attempt_number = 0;
  Timestamp started_at;
  int duration_ms = 0;
  std::optional<int> status_code;
  std::optional<std::string> error;
  std::string response_body;
  Outcome outcome = Outcome::kRetryable;
};

struct DeliveryFilter {
  std::optional<int64_t> destination_id;
  std::optional<DeliveryStatus> status;
  std::optional<std::string> tenant_id = std::nullopt;
};

}  // namespace webhookd
