#pragma once

#include <optional>
#include <string_view>

namespace webhookd {

// How one attempt ended. kSkipped: not sent, because the destination's circuit was open;
// the delivery follows the schedule as after a retryable failure.
enum class Outcome { kSuccess, kRetryable, kPermanent, kSkipped };
std::string_view OutcomeName(Outcome outcome);
std::optional<Outcome> ParseOutcome(std::string_view name);

// Why a delivery was dead-lettered.
enum class DeadLetterReason { kExhausted, kPermanentFailure };
std::string_view DeadLetterReasonName(DeadLetterReason reason);
std::optional<DeadLetterReason> ParseDeadLetterReason(std::string_view name);

// docs/api.md: 2xx success; 408, 429, 5xx retryable; 3xx and every other 4xx permanent.
// Codes outside 100..599 are treated as a broken response: retryable.
Outcome ClassifyStatus(int status_code);

}  // namespace webhookd
