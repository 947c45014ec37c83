#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/delivery.h"
#include "core/event.h"
#include "core/page.h"
#include "server/json_codec.h"

namespace webhookd {

// The JSON of events, their deliveries and attempts (events_api).

// A POST /v1/events body {"type", "payload", "tenant_id"?, "destination_id"?, "ordering_key"?,
// "subjects"?}: kMalformed when it is not JSON, kInvalid when it breaks a rule; `payload` keeps
// the exact bytes it has in `body`.
Result<NewEvent> ParseNewEvent(std::string_view body);
// A JSON array of subjects (core/validation.h: kSubjectsRule), each once in the order first
// given; nullopt when it breaks the rule.
std::optional<std::vector<std::string>> ParseSubjects(std::string_view array);

Json DeliveryJson(const Delivery& d);
// The 202 of POST /v1/events: deliveries as {id, destination_id, status}.
Json ReceiptJson(const Event& e);
// The text of GET /v1/events/{id} and of a list item: the payload as its stored bytes (null
// once erased); deliveries in full when asked for.
std::string EventText(const Event& e, bool with_deliveries);
// The text of GET /v1/events: each payload as its stored bytes (EventText).
std::string EventListText(const Listing<Event>& listing);
Json AttemptJson(const Attempt& a);
// One page of a delivery's attempts, oldest first.
Json AttemptsJson(const Listing<Attempt>& attempts);

}  // namespace webhookd
