#pragma once

#include <optional>
#include <string>

#include "client/publisher.h"

namespace webhookd::client {

// The line `webhookd send` prints for an event, a JSON object without a newline: the
// API's answer when accepted; otherwise {"error", "status", "attempts",
// "idempotency_key", "line"?}, where "error" is the API's problem details for a refusal
// and a sentence when it gave up, and "status" is null when no answer came.
std::string ResultLine(const PublishResult& result, std::optional<int> line);

// The line for a batch line that is not an event; it was not sent.
std::string BadLineResultLine(const std::string& why, int line);

}  // namespace webhookd::client
