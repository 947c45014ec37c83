#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"

namespace webhookd {

// Parses "250ms", "30s", "2m", "1h" (a non-negative integer and a unit, nothing else;
// "1.5s", "30", "-1s", "1d" and overflowing values are refused with kInvalid).
Result<Duration> ParseDuration(std::string_view text);

// The shortest exact spelling of `d` in the units above: 30s, 2m, 1500ms.
std::string FormatDuration(Duration d);

}  // namespace webhookd
