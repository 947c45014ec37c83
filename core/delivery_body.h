#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"

namespace webhookd {

// The bytes every attempt of an event's delivery carries (docs/api.md, "A delivery on the
// wire"), HTTP, broker or feed alike: {"type", "timestamp", "data"}, built from stored bytes
// only, so every attempt carries the same bytes.
std::string DeliveryBody(std::string_view event_type, Timestamp event_created_at,
                         std::string_view payload);

}  // namespace webhookd
