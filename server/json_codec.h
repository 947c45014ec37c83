#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/model.h"

namespace webhookd {

using Json = nlohmann::json;

// Parses a request body: kMalformed for anything that is not JSON (invalid UTF-8
// included), kInvalid for nesting deeper than kMaxJsonDepth.
Result<Json> ParseJsonBody(std::string_view body);

// Compact JSON; invalid UTF-8 in stored text becomes U+FFFD rather than an exception.
std::string Dump(const Json& json);

// The fields of a destination body, type-checked and validated except for the URL's
// address (the API checks that with the resolver). `creating` makes url required.
Result<DestinationFields> ParseDestinationFields(const Json& body, bool creating);

// A POST /v1/events body {"type", "payload", "tenant_id"?, "destination_id"?}: kMalformed when it
// is not JSON, kInvalid when it breaks a rule; `payload` keeps the exact bytes it has in `body`.
Result<NewEvent> ParseNewEvent(std::string_view body);

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

}  // namespace webhookd
