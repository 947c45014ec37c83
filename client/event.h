#pragma once

#include <optional>
#include <string>
#include <vector>

namespace webhookd::client {

// An event to publish.
struct Event {
  std::string type;
  // A JSON object as text. It is sent byte for byte, never parsed and re-written, so
  // numbers of any precision, key order and whitespace reach the receivers unchanged.
  std::string payload;
  std::optional<std::string> tenant_id;
  std::optional<std::string> destination_id;
  // When unset, the publisher makes one up (once per event, reused on every retry).
  std::optional<std::string> idempotency_key;
  // Orders it after the earlier events of this key on fifo destinations.
  std::optional<std::string> ordering_key = std::nullopt;
  // W3C trace context headers (docs/tracing.md): the event joins the caller's trace.
  std::optional<std::string> traceparent = std::nullopt;
  std::optional<std::string> tracestate = std::nullopt;
  // The people or things it is about (docs/privacy.md); never sent to receivers.
  std::vector<std::string> subjects = {};
};

// The body of POST /v1/events: {"type","payload","tenant_id"?,"destination_id"?,
// "ordering_key"?,"subjects"?}, with `payload` spliced in verbatim.
std::string EventBody(const Event& event);

}  // namespace webhookd::client
