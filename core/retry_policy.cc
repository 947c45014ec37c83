#include "core/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace webhookd {
namespace {

// `d` × `factor`, rounded to the nearest microsecond and capped at `cap`, without
// overflowing on huge inputs.
Duration Scale(Duration d, double factor, Duration cap) {
  const double scaled = std::round(static_cast<double>(d.count()) * factor);
  if (scaled >= static_cast<double>(cap.count())) return cap;
  return Duration(static_cast<Duration::rep>(scaled));
}

}  // namespace

RetryPolicy::RetryPolicy(std::vector<Duration> schedule, double jitter)
    : schedule_(std::move(schedule)), jitter_(std::clamp(jitter, 0.0, 0.999999)) {}

Duration RetryPolicy::Wait(int k, Random& random) const {
  const double factor = 1.0 - jitter_ + 2.0 * jitter_ * random.Unit();
  if (schedule_.empty()) return Duration::zero();
  const size_t index =
      static_cast<size_t>(std::clamp(k, 0, static_cast<int>(schedule_.size()) - 1));
  return Scale(schedule_[index], factor, Duration::max());
}

Decision RetryPolicy::Next(int attempt, const AttemptResult& result, Random& random) const {
  Decision decision;
  switch (result.outcome) {
    case Outcome::kSuccess:
      decision.kind = Decision::Kind::kSucceed;
      return decision;
    case Outcome::kPermanent:
      decision.kind = Decision::Kind::kDeadLetter;
      decision.reason = DeadLetterReason::kPermanentFailure;
      // Standard Webhooks: 410 Gone means the endpoint asks to receive nothing more.
      decision.disable_destination = result.status_code == 410;
      return decision;
    case Outcome::kRetryable:
    case Outcome::kSkipped:  // follows the schedule as a retryable failure would
      break;
  }
  if (attempt >= max_attempts()) {
    decision.kind = Decision::Kind::kDeadLetter;
    decision.reason = DeadLetterReason::kExhausted;
    return decision;
  }
  decision.kind = Decision::Kind::kRetry;
  const int status = result.status_code.value_or(0);
  if ((status == 429 || status == 503) && result.retry_after) {
    // The receiver said when: never sooner, only later by up to 20% so that a crowd of
    // deliveries told the same time do not all arrive at once.
    const Duration asked = std::max(*result.retry_after, Duration::zero());
    const double factor = 1.0 + 0.2 * random.Unit();
    decision.wait = std::max(Scale(asked, factor, kMaxRetryAfter), std::min(asked, kMaxRetryAfter));
  } else if (status == 429) {
    const Duration wait = Wait(attempt - 1, random);
    decision.wait = wait > Duration::max() / 2 ? Duration::max() : 2 * wait;
  } else {
    decision.wait = Wait(attempt - 1, random);
  }
  return decision;
}

}  // namespace webhookd
