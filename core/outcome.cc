#include "core/outcome.h"

namespace webhookd {

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess:
      return "success";
    case Outcome::kRetryable:
      return "retryable";
    case Outcome::kPermanent:
      return "permanent";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "retryable";
}

std::optional<Outcome> ParseOutcome(std::string_view name) {
  for (Outcome o :
       {Outcome::kSuccess, Outcome::kRetryable, Outcome::kPermanent, Outcome::kSkipped}) {
    if (OutcomeName(o) == name) return o;
  }
  return std::nullopt;
}

std::string_view DeadLetterReasonName(DeadLetterReason reason) {
  switch (reason) {
    case DeadLetterReason::kExhausted:
      return "exhausted";
    case DeadLetterReason::kPermanentFailure:
      return "permanent_failure";
  }
  return "exhausted";
}

std::optional<DeadLetterReason> ParseDeadLetterReason(std::string_view name) {
  for (DeadLetterReason r : {DeadLetterReason::kExhausted, DeadLetterReason::kPermanentFailure}) {
    if (DeadLetterReasonName(r) == name) return r;
  }
  return std::nullopt;
}

Outcome ClassifyStatus(int status_code) {
  if (status_code < 100 || status_code > 599) return Outcome::kRetryable;  // broken response
  if (status_code >= 200 && status_code <= 299) return Outcome::kSuccess;
  if (status_code == 408 || status_code == 429 || status_code >= 500) return Outcome::kRetryable;
  return Outcome::kPermanent;  // 1xx as a final answer, 3xx (redirects are not followed), 4xx
}

}  // namespace webhookd
