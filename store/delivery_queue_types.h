#pragma once

// The queue protocol between the claim loop and the store (store/delivery_queue.h):
// what a claim hands a worker and what the worker writes back.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "core/circuit.h"
#include "core/delivery.h"
#include "core/destination.h"
#include "core/outcome.h"

namespace webhookd {

// What the claim hands a worker a delivery for (see store/pg/schema/claim_due.sql).
enum class ClaimKind {
  kSend,   // an ordinary attempt
  kProbe,  // the one attempt through a half-open circuit
  kSkip,   // the circuit is open: record a skipped attempt, send nothing
};

// A delivery a worker holds, with everything needed to send it.
struct ClaimedDelivery {
  int64_t delivery_id = 0;
  int64_t claim_token = 0;
  int64_t event_id = 0;
  std::string event_type;
  std::string payload;
  Timestamp event_created_at;
  int64_t destination_id = 0;
  std::string url;
  // Every secret that signs: the current one first, then those still in a rotation's
  // grace period, newest first.
  std::vector<std::string> secrets;
  Headers headers;
  // Set when a stored credential (a secret or header value) could not be decrypted: the
  // attempt fails with this, retryably, and sends nothing.
  std::optional<std::string> credential_error;
  int attempt_count = 0;   // attempts made before this one, all cycles
  int cycle_attempts = 0;  // attempts made before this one, this cycle
  Timestamp created_at;    // of the delivery, for the latency histogram
  ClaimKind kind = ClaimKind::kSend;
  // Its destination had nothing to recover from (circuit closed, no failures, the full
  // cap): a success changes no protection state.
  bool clean = false;
  std::optional<DestinationTls> tls = std::nullopt;    // mTLS, a CA of its own (key opened)
  std::optional<DestinationAuth> auth = std::nullopt;  // OAuth (client secret opened)
  // A broker destination's settings (username and password opened); nullopt for HTTP.
  std::optional<BrokerSettings> broker = std::nullopt;
  // The event's ordering key, for a broker destination only: a message header, and the
  // Kafka message key (docs/brokers.md).
  std::optional<std::string> ordering_key = std::nullopt;
  // The event's W3C trace context (docs/tracing.md): each attempt is a child span of it.
  // Empty for events stored before webhookd kept one.
  std::string traceparent;
  std::string tracestate;
  std::optional<std::string> tenant_id = std::nullopt;
};

struct ClaimedBatch {
  std::vector<ClaimedDelivery> deliveries;
  // Destinations whose due deliveries this claim held back for their rate limit.
  int rate_limited = 0;
};

// The result of one attempt and the delivery's next state, written together.
struct AttemptRecord {
  int64_t delivery_id = 0;
  int64_t claim_token = 0;
  int64_t destination_id = 0;
  int64_t event_id = 0;
  int attempt_number = 0;  // all cycles, 1-based
  Timestamp started_at;
  int duration_ms = 0;
  std::optional<int> status_code;
  std::optional<std::string> error;
  std::string response_body;
  Outcome outcome = Outcome::kRetryable;
  DeliveryStatus next_status = DeliveryStatus::kPending;  // pending, succeeded, dead_lettered
  Duration wait{0};                                       // pending: due this long after the write
  std::optional<DeadLetterReason> dead_letter_reason;
  bool disable_destination = false;
  bool probe = false;             // claimed as ClaimKind::kProbe
  double jitter = 0;              // uniform in [0, 1): jitters a probe time this record sets
  bool clean = false;             // ClaimedDelivery::clean
  Timestamp delivery_created_at;  // for the ingest-to-success latency
};

// What the outcome statement needs to keep each destination's protection.
struct ProtectionSettings {
  CircuitSettings circuit;
  Duration disable_after = std::chrono::hours(24 * 5);  // zero: never
  int default_max_in_flight = 16;
};

// What writing a batch of outcomes did.
struct RecordedOutcomes {
  std::vector<int64_t> applied;  // the delivery ids whose records were applied
  // Those of them that would have been dead-lettered and were put in their destination's
  // feed instead (docs/feeds.md, "Fallback"): still pending.
  std::vector<int64_t> fallen;
  int circuits_opened = 0;  // closed or half-open -> open
  int circuits_closed = 0;  // half-open -> closed
};

struct ReleasedClaim {
  int64_t delivery_id = 0;
  int64_t claim_token = 0;
};

}  // namespace webhookd
