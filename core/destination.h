#pragma once

// A destination: where deliveries go, with its filters, secret, caps and health.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "core/broker.h"
#include "core/circuit.h"

namespace webhookd {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Why a destination is disabled: by the API, by a 410 Gone, or by failing for longer than
// WEBHOOKD_DISABLE_AFTER.
enum class DisabledReason { kManual, kGone, kFailing };

std::string_view DisabledReasonName(DisabledReason reason);

std::optional<DisabledReason> ParseDisabledReason(std::string_view name);

// Ordered delivery (docs/ordering.md): kFifo sends the deliveries of one ordering key one
// at a time, in event order.
enum class Ordering { kNone, kFifo };
std::string_view OrderingName(Ordering ordering);
std::optional<Ordering> ParseOrdering(std::string_view name);

// On a fifo destination, what a dead-lettered head does to its key: the next one goes
// (kContinue), or the key waits until the dead letter is replayed or dismissed (kBlock).
enum class OnDeadLetter { kContinue, kBlock };
std::string_view OnDeadLetterName(OnDeadLetter on_dead_letter);
std::optional<OnDeadLetter> ParseOnDeadLetter(std::string_view name);

// What becomes of a push destination's delivery that would be dead-lettered
// (docs/feeds.md, "Fallback"): a dead letter, or a message of the destination's own feed.
// The API shows kDeadLetter as null.
enum class Fallback { kDeadLetter, kFeed };

// How a destination is doing, as the API shows it (the rules that change it run in SQL:
// see docs/architecture.md, "Receiver protection").
struct DestinationHealth {
  CircuitState circuit = CircuitState::kClosed;  // half-open from next_probe_at on
  int consecutive_failures = 0;
  std::optional<Timestamp> failing_since;
  std::optional<Timestamp> next_probe_at;
  std::optional<int> effective_max_in_flight;  // nullopt: max_in_flight
};

// A destination's TLS settings (docs/egress.md), PEM text: a client certificate and its
// key for mutual TLS (both or neither), and a CA trusted instead of the system's. The key
// is write-only like the secret: responses show "set", and a patch giving "set" keeps it.
struct DestinationTls {
  std::optional<std::string> client_certificate;
  std::optional<std::string> client_key;
  std::optional<std::string> ca_certificate;
  bool operator==(const DestinationTls&) const = default;
};

// OAuth 2.0 client credentials (RFC 6749 section 4.4; docs/egress.md): every attempt
// carries a bearer token from `token_url`. The client secret is write-only like the key.
struct DestinationAuth {
  std::string token_url;
  std::string client_id;
  std::string client_secret;
  std::optional<std::string> scope;
  bool operator==(const DestinationAuth&) const = default;
};

struct Destination {
  int64_t id = 0;
  std::string url;
  std::string description;
  std::vector<std::string> event_types;  // empty: every type
  std::string secret;
  Headers headers;
  bool enabled = true;
  std::optional<int> max_in_flight;  // nullopt: the configured default
  std::optional<int> rate_limit;     // attempts started per second; nullopt: no limit
  Ordering ordering = Ordering::kNone;
  OnDeadLetter on_dead_letter = OnDeadLetter::kContinue;
  Fallback fallback = Fallback::kDeadLetter;  // never kFeed on a feed: (it is read already)
  // A SQL/JSON path predicate on the payload; only events it is true for are delivered
  // (docs/filters.md). nullopt: every event of its types.
  std::optional<std::string> filter = std::nullopt;
  std::optional<DestinationTls> tls = std::nullopt;
  std::optional<DestinationAuth> auth = std::nullopt;
  // A broker destination's settings (docs/brokers.md); nullopt for HTTP.
  std::optional<BrokerSettings> broker = std::nullopt;
  std::optional<DisabledReason> disabled_reason;  // set while disabled
  DestinationHealth health;
  Timestamp created_at;
  Timestamp updated_at;
  std::optional<std::string> tenant_id = std::nullopt;  // set at creation, never changed
};

// How responses show a custom header's value (values are write-only, like the secret).
// In a patch, a header given this value keeps the value it has (so a body read back can
// be sent again unchanged); store/pg/sql/update_destination.sql applies that.
inline constexpr std::string_view kHiddenHeaderValue = "set";

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
  std::optional<Ordering> ordering;
  std::optional<OnDeadLetter> on_dead_letter;
  std::optional<Fallback> fallback;
  std::optional<std::optional<std::string>> filter = std::nullopt;    // set to nullopt: none
  std::optional<std::optional<DestinationTls>> tls = std::nullopt;    // set to nullopt: none
  std::optional<std::optional<DestinationAuth>> auth = std::nullopt;  // set to nullopt: none
  // Replaces the settings whole; a username or password given as "set" keeps the stored one.
  std::optional<std::optional<BrokerSettings>> broker = std::nullopt;  // set to nullopt: none
};

// The `tenant_id` of a filter selects that tenant's rows; a Scope applies on top of it.
struct DestinationFilter {
  std::optional<std::string> tenant_id = std::nullopt;
};

}  // namespace webhookd
