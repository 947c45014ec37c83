#pragma once

#include <string_view>

#include "base/result.h"
#include "client/event.h"

namespace webhookd::client {

// One line of a `webhookd send --batch` file: a JSON object {"type", "payload",
// "tenant_id"?, "destination_id"?, "idempotency_key"?}. The payload keeps the exact bytes
// it has on the line. kInvalid, with a message for a person, when the line is not such an
// object (an unknown member included, as it is more likely a typo than a wish).
Result<Event> ParseBatchLine(std::string_view line);

}  // namespace webhookd::client
