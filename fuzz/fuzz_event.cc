// Fuzzes the request-body path of POST /v1/events and POST/PATCH /v1/destinations:
// ParseJsonBody, then ParseNewEvent and ParseDestinationFields on whatever parsed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/validation.h"
#include "fuzz/fuzz_check.h"
#include "net/url.h"
#include "server/json_codec.h"

namespace {

using webhookd::Json;

void CheckEvent(const Json& body) {
  const webhookd::Result<webhookd::NewEvent> event = webhookd::ParseNewEvent(body);
  if (!event) {
    FUZZ_CHECK(event.error().kind == webhookd::ErrorKind::kInvalid);
    FUZZ_CHECK(!event.error().fields.empty());
    return;
  }
  FUZZ_CHECK(webhookd::IsValidEventType(event->type));
  // The stored payload is compact JSON of an object that reads back as the same value.
  const webhookd::Result<Json> payload = webhookd::ParseJsonBody(event->payload);
  FUZZ_CHECK(payload.has_value());
  FUZZ_CHECK(payload->is_object());
  FUZZ_CHECK(*payload == body.at("payload"));
  if (event->destination_id) {
    FUZZ_CHECK(*event->destination_id > 0);
    FUZZ_CHECK(webhookd::FormatId(webhookd::kDestinationPrefix, *event->destination_id) ==
               body.at("destination_id").get<std::string>());
  }
}

void CheckDestination(const Json& body, bool creating) {
  const webhookd::Result<webhookd::DestinationFields> fields =
      webhookd::ParseDestinationFields(body, creating);
  if (!fields) {
    FUZZ_CHECK(fields.error().kind == webhookd::ErrorKind::kInvalid);
    FUZZ_CHECK(!fields.error().fields.empty());
    return;
  }
  FUZZ_CHECK(!creating || fields->url.has_value());
  if (fields->url) FUZZ_CHECK(webhookd::ParseUrl(*fields->url).has_value());
  if (fields->description) {
    FUZZ_CHECK(fields->description->size() <= webhookd::kMaxDescriptionLength);
    FUZZ_CHECK(fields->description->find('\0') == std::string::npos);
  }
  if (fields->event_types) {
    FUZZ_CHECK(fields->event_types->size() <= webhookd::kMaxEventTypeFilters);
    for (const std::string& pattern : *fields->event_types) {
      FUZZ_CHECK(webhookd::IsValidEventTypePattern(pattern));
    }
  }
  if (fields->headers) {
    FUZZ_CHECK(fields->headers->size() <= webhookd::kMaxCustomHeaders);
    for (const auto& [name, value] : *fields->headers) {
      FUZZ_CHECK(webhookd::IsValidHeaderName(name));
      FUZZ_CHECK(!webhookd::IsReservedHeader(name));
      FUZZ_CHECK(webhookd::IsValidHeaderValue(value));
    }
  }
  if (fields->max_in_flight && *fields->max_in_flight) {
    FUZZ_CHECK(**fields->max_in_flight >= 1);
    FUZZ_CHECK(**fields->max_in_flight <= webhookd::kMaxMaxInFlight);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const webhookd::Result<Json> body = webhookd::ParseJsonBody(text);
  if (!body) {
    FUZZ_CHECK(body.error().kind == webhookd::ErrorKind::kMalformed ||
               body.error().kind == webhookd::ErrorKind::kInvalid);
    return 0;
  }
  // What parsed is at most kMaxJsonDepth deep, so printing it again is safe and exact.
  const std::string dumped = webhookd::Dump(*body);
  const webhookd::Result<Json> again = webhookd::ParseJsonBody(dumped);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(*again == *body);

  CheckEvent(*body);
  CheckDestination(*body, /*creating=*/true);
  CheckDestination(*body, /*creating=*/false);
  return 0;
}
