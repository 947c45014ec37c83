#pragma once

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "core/dead_letter.h"
#include "core/delivery.h"
#include "core/destination.h"
#include "core/event.h"
#include "core/json_scan.h"
#include "core/page.h"
#include "core/stats.h"
#include "core/tenant.h"

namespace webhookd {

using Json = nlohmann::json;

// Parses a request body: kMalformed for anything that is not JSON (invalid UTF-8
// included), kInvalid for nesting deeper than kMaxJsonDepth.
Result<Json> ParseJsonBody(std::string_view body);

// The members a JSON object of a request may hold: those the route reads, and those of the
// resource's own view that it ignores (`read_only`), so that a body fetched with GET can be
// sent back unchanged. Any other member is a mistake the caller would not otherwise notice
// (a misspelt "filtr" would deliver every event), so it is refused.
struct KnownMembers {
  std::initializer_list<std::string_view> writable;
  std::initializer_list<std::string_view> read_only = {};
};

// One error per member of `names` that `known` does not list: field `prefix` + the name
// ("tls.expires", "event_type"), message "unknown member", with the nearest writable name
// when one is a slip of the keyboard away; at most 20 of them.
void CheckMembers(const std::vector<std::string_view>& names, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors);
void CheckMembers(const Json& object, const KnownMembers& known, std::string_view prefix,
                  std::vector<FieldError>& errors);
void CheckMembers(const std::vector<JsonMember>& members, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors);

// Compact JSON; invalid UTF-8 in stored text becomes U+FFFD rather than an exception.
std::string Dump(const Json& json);

// The fields of a destination body, type-checked and validated except for the URL's
// address (the API checks that with the resolver). `creating` makes url required.
Result<DestinationFields> ParseDestinationFields(const Json& body, bool creating);

// A POST /v1/events body {"type", "payload", "tenant_id"?, "destination_id"?}: kMalformed when it
// is not JSON, kInvalid when it breaks a rule; `payload` keeps the exact bytes it has in `body`.
Result<NewEvent> ParseNewEvent(std::string_view body);

// The members of a body that must be one JSON object, each with its value's raw bytes
// (core/json_scan.h): for bodies whose values are kept as written. kMalformed says where
// the JSON breaks.
Result<std::vector<JsonMember>> ScanJsonBody(std::string_view body);

// The optional body of POST /v1/destinations/{id}/secret/rotate: {"secret"?,
// "grace_period"?}; `grace` is `default_grace` when absent. An empty body is all defaults.
struct SecretRotation {
  std::optional<std::string> secret;
  Duration grace{0};
};
Result<SecretRotation> ParseSecretRotation(std::string_view body, Duration default_grace);

// The optional body of POST /v1/admin/tenants/{tenant_id}/portal-links: {"ttl"?}.
Result<Duration> ParsePortalLinkTtl(std::string_view body, Duration default_ttl);

// The body of POST /v1/admin/dead-letters/replay: its filter, with the names and the text
// of the list's query parameters (destination_id, since, until, reason, tenant_id), each a
// string or null. A body with none of them must say "all": true.
Result<std::multimap<std::string, std::string>> ParseReplayFilterBody(std::string_view body);

// The optional body of a route that reads none (replaying or dismissing one dead letter):
// empty or {}.
Result<void> ParseEmptyBody(std::string_view body);

Json DestinationJson(const Destination& d, int default_max_in_flight, bool with_secret);
Json DeliveryJson(const Delivery& d);
// The 202 of POST /v1/events: deliveries as {id, destination_id, status}.
Json ReceiptJson(const Event& e);
// GET /v1/events/{id} and the list: with payload; deliveries in full when present.
// The text of GET /v1/events/{id} and of a list item: the payload as its stored bytes.
std::string EventText(const Event& e, bool with_deliveries);
Json AttemptJson(const Attempt& a);
Json DeadLetterJson(const DeadLetter& d);
Json TenantJson(const TenantSummary& t);

Json SecretJson(const std::string& secret);
Json RotatedSecretJson(const std::string& secret, Timestamp previous_valid_until);
// A list of every item and no further page.
// One page of a delivery's attempts, oldest first.
Json AttemptsJson(const Listing<Attempt>& attempts);
// The text of GET /v1/events: each payload as its stored bytes (EventText).
std::string EventListText(const Listing<Event>& listing);
Json TenantListJson(const TenantListing& listing);
Json ReplayedJson(int64_t delivery_id);
// The answer to a bulk replay: how many were replayed, and whether more may be left.
Json BulkReplayedJson(int64_t count, bool more);
Json StatsJson(Duration window, const HealthStats& stats);
Json StatsSeriesJson(Duration window, Duration step, const std::vector<StatsPoint>& points);
Json PortalLinkJson(const std::string& url, const std::string& key,
                    const std::optional<Timestamp>& expires_at);

}  // namespace webhookd
