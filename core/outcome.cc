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
  }
  return "retryable";
}

Outcome ClassifyStatus(int status_code) {
  if (status_code < 100 || status_code > 599) return Outcome::kRetryable;  // broken response
  if (status_code >= 200 && status_code <= 299) return Outcome::kSuccess;
  if (status_code == 408 || status_code == 429 || status_code >= 500) return Outcome::kRetryable;
  return Outcome::kPermanent;  // 1xx as a final answer, 3xx (redirects are not followed), 4xx
}

}  // namespace webhookd
