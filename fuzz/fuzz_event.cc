// Fuzzes the request-body path of POST /v1/events and POST/PATCH /v1/destinations:
// ParseJsonBody and ParseNewEvent on the text, ParseDestinationFields on whatever parsed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/validation.h"
#include "fuzz/fuzz_check.h"
#include "net/url.h"
#include "server/destination_codec.h"
#include "server/event_codec.h"

namespace {

using webhookd::Json;

void CheckEvent(std::string_view text, const Json& body) {
  const webhookd::Result<webhookd::NewEvent> event = webhookd::ParseNewEvent(text);
  if (!event) {
    // nlohmann stops at a NUL byte and accepts what came before; the scanner refuses it.
    if (event.error().kind == webhookd::ErrorKind::kMalformed) {
      FUZZ_CHECK(text.find('\0') != std::string_view::npos);
      return;
    }
    FUZZ_CHECK(event.error().kind == webhookd::ErrorKind::kInvalid);
    FUZZ_CHECK(!event.error().fields.empty());
    return;
  }
  FUZZ_CHECK(webhookd::IsValidEventType(event->type));
  FUZZ_CHECK(!webhookd::IsReservedEventType(event->type));
  // The stored payload is the payload's own bytes in the body, and reads back as the
  // same value.
  FUZZ_CHECK(text.find(event->payload) != std::string_view::npos);
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

// Whatever valid JSON object the input is, posted as a payload it is kept byte for byte:
// what is delivered as `data` is what was sent.
void CheckPayloadKeptExactly(std::string_view text, const Json& value) {
  if (!value.is_object() || text.find('\0') != std::string_view::npos) return;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte order mark
  const std::string body = R"({"type":"t","payload":)" + std::string(text) + "}";
  const webhookd::Result<webhookd::NewEvent> event = webhookd::ParseNewEvent(body);
  if (!event) {
    // Only the depth limit may refuse it: wrapping adds one level.
    FUZZ_CHECK(event.error().kind == webhookd::ErrorKind::kInvalid);
    return;
  }
  const size_t start = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  FUZZ_CHECK(event->payload == text.substr(start, end - start + 1));
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

  CheckEvent(text, *body);
  CheckPayloadKeptExactly(text, *body);
  CheckDestination(*body, /*creating=*/true);
  CheckDestination(*body, /*creating=*/false);
  return 0;
}
