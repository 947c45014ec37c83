#pragma once

#include <optional>
#include <string_view>

namespace webhookd {

enum class Outcome { kSuccess, kRetryable, kPermanent };

std::string_view OutcomeName(Outcome outcome);

// docs/api.md: 2xx success; 408, 429, 5xx retryable; 3xx and every other 4xx permanent.
// Codes outside 100..599 are treated as a broken response: retryable.
Outcome ClassifyStatus(int status_code);

}  // namespace webhookd
