#pragma once

#include <optional>
#include <string_view>

#include "base/clock.h"

namespace webhookd {

// A Retry-After header value as a wait from `now`: delta-seconds ("120") or an HTTP-date
// (IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 or asctime). A date in the past
// is a zero wait. nullopt when the value is neither.
std::optional<Duration> ParseRetryAfter(std::string_view value, Timestamp now);

}  // namespace webhookd
