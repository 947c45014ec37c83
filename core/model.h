#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "core/circuit.h"
#include "core/outcome.h"
#include "core/role.h"

namespace webhookd {

using Headers = std::vector<std::pair<std::string, std::string>>;

// What a caller may see: everything (no tenant_id), or one tenant's rows alone. A scoped
// read or write finds nothing of another tenant or of none: to it they do not exist, so
// it answers exactly as for an unknown id.
//
// There is no default: every holder names its scope (All() or Tenant()), so a scope
// forgotten on a new path does not compile instead of silently meaning every tenant.
class Scope {
 public:
  Scope() = delete;
  static Scope All() { return Scope(std::nullopt); }
  static Scope Tenant(std::string tenant_id) { return Scope(std::move(tenant_id)); }

  std::optional<std::string> tenant_id;  // nullopt: every tenant's and none's

 private:
  explicit Scope(std::optional<std::string> tenant_id) : tenant_id(std::move(tenant_id)) {}
};

// Why a destination is disabled: by the API, by a 410 Gone, or by failing for longer than
// WEBHOOKD_DISABLE_AFTER.
enum class DisabledReason { kManual, kGone, kFailing };
std::string_view DisabledReasonName(DisabledReason reason);
std::optional<DisabledReason> ParseDisabledReason(std::string_view name);

// How a destination is doing, as the API shows it (the rules that change it run in SQL:
// see docs/architecture.md, "Receiver protection").
struct DestinationHealth {
  CircuitState circuit = CircuitState::kClosed;  // half-open from next_probe_at on
  int consecutive_failures = 0;
  std::optional<Timestamp> failing_since;
  std::optional<Timestamp> next_probe_at;
  std::optional<int> effective_max_in_flight;  // nullopt: max_in_flight
};

struct Destination {
  int64_t id = 0;
  std::string url;
  std::string description;
  std::vector<std::string> event_types;  // empty: every type
  std::string secret;
  Headers headers;
  bool enabled = true;
  std::optional<int> max_in_flight;               // nullopt: the configured default
  std::optional<int> rate_limit;                  // attempts started per second; nullopt: no limit
  std::optional<DisabledReason> disabled_reason;  // set while disabled
  DestinationHealth health;
  Timestamp created_at;
  Timestamp updated_at;
  std::optional<std::string> tenant_id = std::nullopt;  // set at creation, never changed
};

// The fields a create or a patch may set; nullopt = not given.
struct DestinationFields {
  std::optional<std::string> url;
  std::optional<std::string> description;
  std::optional<std::vector<std::string>> event_types;
  std::optional<std::string> secret;
  std::optional<Headers> headers;
  std::optional<bool> enabled;
  std::optional<std::optional<int>> max_in_flight;  // set to nullopt: back to the default
  // A tenant_id can only be set at creation; a patch that names one must name the
  // destination's own (nullopt inside: none), or it is refused.
  std::optional<std::optional<std::string>> tenant_id = std::nullopt;
  std::optional<std::optional<int>> rate_limit;  // set to nullopt: no limit
};

struct NewEvent {
  std::string type;
  std::string payload;  // a JSON object: the bytes of the posted value, exactly
  std::optional<int64_t> destination_id;
  // When not empty: the SHA-256 of the API key that sent it, not yet looked up. The store
  // ingests only if that key is live, in the ingest's own transaction, and answers
  // kUnauthorized otherwise.
  std::string verify_key_hash = {};
  // Fans out to this tenant's destinations alone; nullopt: to destinations without one.
  std::optional<std::string> tenant_id = std::nullopt;
};

struct IdempotencyKey {
  std::string key;
  std::string request_hash;  // hex SHA-256 of the request body
};

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
  std::optional<std::string> tenant_id = std::nullopt;  // its event's (and destination's)
};

struct Event {
  int64_t id = 0;
  std::string type;
  std::string payload;
  Timestamp created_at;
  std::vector<Delivery> deliveries;  // filled by reads that say so
  std::optional<std::string> tenant_id = std::nullopt;
};

struct IngestReceipt {
  Event event;            // with its deliveries as created (all pending)
  bool replayed = false;  // an Idempotency-Key matched an earlier request
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
};

struct ApiKeyInfo {
  int64_t id = 0;
  std::string name;
  Role role = Role::kPublisher;
  Timestamp created_at;
  std::optional<Timestamp> revoked_at;
  std::optional<std::string> tenant_id = std::nullopt;  // set exactly for Role::kTenant
  std::optional<Timestamp> expires_at = std::nullopt;   // nullopt: never
};

// A key to create: its role, its tenant (for Role::kTenant) and how long it lives.
struct NewApiKey {
  std::string name;
  Role role = Role::kPublisher;
  std::string key_hash;  // hex SHA-256; the key itself is never stored
  std::optional<std::string> tenant_id = std::nullopt;
  std::optional<Duration> ttl = std::nullopt;  // nullopt: never expires
};

// Newest first: a page holds ids below `before_id` (the cursor).
struct Page {
  int limit = 50;
  std::optional<int64_t> before_id;
};

template <typename T>
struct Listing {
  std::vector<T> items;
  std::optional<int64_t> next_before_id;  // nullopt: this was the last page
};

// The `tenant_id` of a filter selects that tenant's rows; a Scope applies on top of it.
struct DestinationFilter {
  std::optional<std::string> tenant_id = std::nullopt;
};

struct EventFilter {
  std::optional<std::string> type;
  std::optional<Timestamp> after;   // created_at >= after
  std::optional<Timestamp> before;  // created_at < before
  std::optional<std::string> tenant_id = std::nullopt;
};

struct DeliveryFilter {
  std::optional<int64_t> destination_id;
  std::optional<DeliveryStatus> status;
  std::optional<std::string> tenant_id = std::nullopt;
};

struct DeadLetterFilter {
  std::optional<int64_t> destination_id;
  std::optional<DeadLetterReason> reason;
  std::optional<Timestamp> since;  // dead_lettered_at >= since
  std::optional<Timestamp> until;  // dead_lettered_at < until
  std::optional<std::string> tenant_id = std::nullopt;
};

// A tenant as GET /v1/admin/tenants shows it.
struct TenantSummary {
  std::string tenant_id;
  int64_t destinations = 0;  // live (not deleted)
  int64_t pending = 0;       // deliveries waiting for an attempt
  int64_t dead_letters = 0;  // not replayed yet
};

// Tenants in tenant_id order: a page holds ids after `after_id` (the cursor).
struct TenantPage {
  int limit = 50;
  std::optional<std::string> after_id;
};

struct TenantListing {
  std::vector<TenantSummary> items;
  std::optional<std::string> next_after_id;  // nullopt: this was the last page
};

// What the claim hands a worker a delivery for (see migrations/0011_protection.sql).
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
  int attempt_count = 0;   // attempts made before this one, all cycles
  int cycle_attempts = 0;  // attempts made before this one, this cycle
  Timestamp created_at;    // of the delivery, for the latency histogram
  ClaimKind kind = ClaimKind::kSend;
  // Its destination had nothing to recover from (circuit closed, no failures, the full
  // cap): a success changes no protection state.
  bool clean = false;
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
  int circuits_opened = 0;       // closed or half-open -> open
  int circuits_closed = 0;       // half-open -> closed
};

struct DeliveryGauges {
  int64_t pending = 0;
  int64_t in_flight = 0;
  int64_t retrying_over_24h = 0;  // unfinished and created more than 24 h ago
  int64_t circuits_open = 0;      // enabled destinations whose circuit is open or half-open
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

struct ReleasedClaim {
  int64_t delivery_id = 0;
  int64_t claim_token = 0;
};

}  // namespace webhookd
